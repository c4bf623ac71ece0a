package batchget

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fakeAPI answers every request with its items, leaving the last key of
// each request unprocessed the first `defer` times it is asked.
type fakeAPI struct {
	requests []int // keys per request
	defer_   int
	fail     error
}

func (f *fakeAPI) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for table, ka := range in.RequestItems {
		f.requests = append(f.requests, len(ka.Keys))
		keys := ka.Keys
		if f.defer_ > 0 && len(keys) > 0 {
			f.defer_--
			last := keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{table: {Keys: []map[string]types.AttributeValue{last}, ConsistentRead: ka.ConsistentRead}}
		}
		out.Responses[table] = append(out.Responses[table], keys...)
	}
	return out, nil
}

func keys(n int) []map[string]types.AttributeValue {
	out := make([]map[string]types.AttributeValue, n)
	for i := range out {
		out[i] = map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}
	}
	return out
}

func TestEach(t *testing.T) {
	api := &fakeAPI{defer_: 2}
	seen := map[string]bool{}
	err := Each(context.Background(), api, "t", keys(250), types.KeysAndAttributes{}, func(it map[string]types.AttributeValue) error {
		seen[it["k"].(*types.AttributeValueMemberS).Value] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 250 {
		t.Fatalf("%d items handed over, want 250", len(seen))
	}
	// 100 (one key left), that key (left again), that key, then 100 and 50.
	if fmt.Sprint(api.requests) != "[100 1 1 100 50]" {
		t.Fatalf("requests of %v keys, want [100 1 1 100 50]", api.requests)
	}
}

func TestEachErrors(t *testing.T) {
	stop := errors.New("stop")
	if err := Each(context.Background(), &fakeAPI{}, "t", keys(3), types.KeysAndAttributes{}, func(map[string]types.AttributeValue) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("each's error: %v", err)
	}
	boom := errors.New("boom")
	if err := Each(context.Background(), &fakeAPI{fail: boom}, "t", keys(3), types.KeysAndAttributes{}, func(map[string]types.AttributeValue) error { return nil }); !errors.Is(err, boom) || err.Error() != "read t: boom" {
		t.Fatalf("DynamoDB's error: %v", err)
	}
	if err := Each(context.Background(), &fakeAPI{defer_: MaxRetries + 5}, "t", keys(1), types.KeysAndAttributes{}, func(map[string]types.AttributeValue) error { return nil }); err == nil {
		t.Fatal("keys never processed: no error")
	}
}
