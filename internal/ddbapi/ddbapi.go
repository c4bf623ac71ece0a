// Package ddbapi names the DynamoDB client's calls one interface each, so
// that a consumer's interface lists the calls it makes by embedding them:
//
//	type API interface {
//		ddbapi.PutItem
//		ddbapi.Query
//	}
//
// *dynamodb.Client satisfies every one. Where the SDK already has the
// one-call interface (its paginators' and waiters'), the name is an alias of
// it.
package ddbapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Query, Scan, BatchGetItem and DescribeTable are the SDK's own.
type (
	Query         = dynamodb.QueryAPIClient
	Scan          = dynamodb.ScanAPIClient
	BatchGetItem  = dynamodb.BatchGetItemAPIClient
	DescribeTable = dynamodb.DescribeTableAPIClient
)

// GetItem is DynamoDB's GetItem.
type GetItem interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// PutItem is DynamoDB's PutItem.
type PutItem interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// UpdateItem is DynamoDB's UpdateItem.
type UpdateItem interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// TransactWriteItems is DynamoDB's TransactWriteItems.
type TransactWriteItems interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// CreateTable is DynamoDB's CreateTable.
type CreateTable interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
}

// UpdateTimeToLive is DynamoDB's UpdateTimeToLive.
type UpdateTimeToLive interface {
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// TableMaker is what creating a table and waiting for it takes: CreateTable,
// DescribeTable and UpdateTimeToLive (schema/provision and the seed 003
// tables).
type TableMaker interface {
	CreateTable
	DescribeTable
	UpdateTimeToLive
}
