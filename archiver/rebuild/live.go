package rebuild

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Live reads the live rows of one kind.
type Live interface {
	Rows(ctx context.Context, kind RowKind) ([]map[string]types.AttributeValue, error)
}

// LiveAPI is the part of the DynamoDB client DynamoLive uses.
type LiveAPI interface {
	ddbapi.Scan
	ddbapi.Query
}

// DynamoLive reads live rows from the DynamoDB tables of one naming.
type DynamoLive struct {
	api    LiveAPI
	naming schema.Naming
}

// NewDynamoLive returns a Live over the tables of n.
func NewDynamoLive(api LiveAPI, n schema.Naming) (*DynamoLive, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return &DynamoLive{api: api, naming: n}, nil
}

// read is one planned request: a Scan or a Query, of the kind's table or
// (with) of its With table.
type read struct {
	scan  *dynamodb.ScanInput
	query *dynamodb.QueryInput
	with  bool
}

// reads plans the requests that fetch every row of kind (pure; tested):
//
//   - workflow metrics: a Query of workflows GSI1 per workflow type
//     ([workflowType, entityType = "metrics"]), so only metrics rows are
//     read, not the executions, albums and tasks the table also holds;
//   - message counts: a consistent Scan of the metrics table, filtered on
//     the "messages/" scope prefix;
//   - run summaries: a consistent Scan of workflow-runs (it holds nothing
//     else) and one of workflow-jobs (the jobs' shares).
func reads(kind RowKind, n schema.Naming) ([]read, error) {
	table := aws.String(n.Table(kind.Table))
	switch kind.Name {
	case KindWorkflowMetrics:
		var out []read
		for _, wt := range workflowTypes {
			out = append(out, read{query: &dynamodb.QueryInput{
				TableName:                table,
				IndexName:                aws.String("GSI1"),
				KeyConditionExpression:   aws.String("#wt = :wt AND #et = :et"),
				ExpressionAttributeNames: map[string]string{"#wt": "workflowType", "#et": "entityType"},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":wt": &types.AttributeValueMemberS{Value: wt},
					":et": &types.AttributeValueMemberS{Value: "metrics"},
				},
			}})
		}
		return out, nil
	case KindMessageCounts:
		return []read{{scan: &dynamodb.ScanInput{
			TableName:                 table,
			ConsistentRead:            aws.Bool(true),
			FilterExpression:          aws.String("begins_with(#s, :p)"),
			ExpressionAttributeNames:  map[string]string{"#s": "scope"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: schema.MessageScopePrefix}},
		}}}, nil
	case KindRunSummaries:
		return []read{
			{scan: &dynamodb.ScanInput{TableName: table, ConsistentRead: aws.Bool(true)}},
			{scan: &dynamodb.ScanInput{TableName: aws.String(n.Table(kind.With)), ConsistentRead: aws.Bool(true)}, with: true},
		}, nil
	}
	return nil, fmt.Errorf("rebuild: unknown row kind %q", kind.Name)
}

// Rows implements Live.
func (d *DynamoLive) Rows(ctx context.Context, kind RowKind) ([]map[string]types.AttributeValue, error) {
	rs, err := reads(kind, d.naming)
	if err != nil {
		return nil, err
	}
	var all, with []map[string]types.AttributeValue
	for _, r := range rs {
		keep := func(items []map[string]types.AttributeValue) { all = append(all, items...) }
		if r.with {
			keep = func(items []map[string]types.AttributeValue) { with = append(with, items...) }
		}
		if r.scan != nil {
			p := dynamodb.NewScanPaginator(d.api, r.scan)
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					return nil, fmt.Errorf("rebuild: scan %s: %w", aws.ToString(r.scan.TableName), err)
				}
				keep(page.Items)
			}
			continue
		}
		p := dynamodb.NewQueryPaginator(d.api, r.query)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("rebuild: query %s %s: %w", aws.ToString(r.query.TableName), aws.ToString(r.query.IndexName), err)
			}
			keep(page.Items)
		}
	}
	return kind.Rows(all, with)
}

// storeLive reads rows from a MemStore.
type storeLive struct{ m *projector.MemStore }

// StoreLive returns a Live over the items of a projector.MemStore (the
// archive side of Verify, and tests).
func StoreLive(m *projector.MemStore) Live { return storeLive{m} }

func (s storeLive) Rows(_ context.Context, kind RowKind) ([]map[string]types.AttributeValue, error) {
	return kind.Rows(s.items(kind.Table), s.items(kind.With))
}

// items are the MemStore's items of a logical table, in key order (none
// for "").
func (s storeLive) items(table string) []map[string]types.AttributeValue {
	if table == "" {
		return nil
	}
	items := s.m.Items(table)
	all := make([]map[string]types.AttributeValue, 0, len(items))
	for _, id := range slices.Sorted(maps.Keys(items)) {
		all = append(all, items[id])
	}
	return all
}
