package query

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// fakeAPI records requests and answers queries from a script of pages.
type fakeAPI struct {
	mu      sync.Mutex // merged reads send their Queries in parallel
	queries []*dynamodb.QueryInput
	gets    []*dynamodb.GetItemInput
	// pages are returned in turn by Query; past the end, an empty last page.
	pages []*dynamodb.QueryOutput
	err   error
}

func (f *fakeAPI) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.gets = append(f.gets, in)
	if f.err != nil {
		return nil, f.err
	}
	return &dynamodb.GetItemOutput{}, nil
}

func (f *fakeAPI) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, in)
	if f.err != nil {
		return nil, f.err
	}
	if len(f.pages) == 0 {
		return &dynamodb.QueryOutput{}, nil
	}
	p := f.pages[0]
	f.pages = f.pages[1:]
	return p, nil
}

func (f *fakeAPI) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return nil, errors.New("fake: BatchGetItem not scripted")
}
