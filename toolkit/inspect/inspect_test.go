package inspect

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// pages is a DynamoDB that answers Scan and Query with its items, one page
// per element, and remembers the tables asked.
type pages struct {
	items  [][]map[string]types.AttributeValue
	tables []string
}

func (p *pages) page(table *string, start map[string]types.AttributeValue) ([]map[string]types.AttributeValue, map[string]types.AttributeValue) {
	p.tables = append(p.tables, *table)
	i := 0
	if start != nil {
		i = len(start["i"].(*types.AttributeValueMemberS).Value)
	}
	if i >= len(p.items) {
		return nil, nil
	}
	var next map[string]types.AttributeValue
	if i+1 < len(p.items) {
		next = map[string]types.AttributeValue{"i": &types.AttributeValueMemberS{Value: strings.Repeat("x", i+1)}}
	}
	return p.items[i], next
}

func (p *pages) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	items, next := p.page(in.TableName, in.ExclusiveStartKey)
	return &dynamodb.ScanOutput{Items: items, Count: int32(len(items)), LastEvaluatedKey: next}, nil
}

func (p *pages) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	items, next := p.page(in.TableName, in.ExclusiveStartKey)
	return &dynamodb.QueryOutput{Items: items, Count: int32(len(items)), LastEvaluatedKey: next}, nil
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestEventCounts(t *testing.T) {
	db := &pages{items: [][]map[string]types.AttributeValue{
		{{"subject": s("github/1/job/2"), "type": s(schema.TypeJobQueued), "time": s("2026-01-05T10:00:00Z")}},
		{{"subject": s("github/1/job/2"), "type": s(schema.TypeJobQueued), "time": s("2026-01-04T10:00:00.5Z")},
			{"subject": s("x/1"), "type": s("no.such.type"), "time": s("not a time")}},
	}}
	sum, err := EventCounts(context.Background(), db, schema.Naming{Prefix: "p", Stage: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Table != "p-dev-events" || sum.Events != 3 || sum.Subjects != 2 || sum.PerType[schema.TypeJobQueued] != 2 || sum.PerType["no.such.type"] != 1 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.First.Format(time.RFC3339Nano) != "2026-01-04T10:00:00.5Z" || sum.Last.Format(time.RFC3339) != "2026-01-05T10:00:00Z" {
		t.Fatalf("range %v .. %v", sum.First, sum.Last)
	}
	var b strings.Builder
	if err := sum.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "p-dev-events: 3 events over 2 subjects, 2026-01-04T10:00:00Z .. 2026-01-05T10:00:00Z\n") ||
		!strings.Contains(b.String(), "    "+schema.TypeJobQueued+"  2\n") || strings.Contains(b.String(), "no.such.type") {
		t.Fatalf("text:\n%s", b.String())
	}
}

func TestSubject(t *testing.T) {
	item := func(id, tm, recorded string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"subject": s("messages/m"), "id": s(id), "type": s(schema.TypeMessageCreated), "source": s("rez_agent/dev"),
			"time": s(tm), "recordedat": s(recorded), "data": s(`{}`)}
	}
	db := &pages{items: [][]map[string]types.AttributeValue{
		{item("late", "2026-01-05T10:00:01Z", "2026-01-05T10:00:02Z"), item("second", "2026-01-05T10:00:00Z", "2026-01-05T10:00:05Z")},
		{item("first", "2026-01-05T10:00:00Z", "2026-01-05T10:00:03Z")},
	}}
	res, err := Subject(context.Background(), db, schema.Naming{Prefix: "p", Stage: "dev"}, SubjectOptions{Subject: "messages/m"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range res.Events {
		ids = append(ids, e.ID)
	}
	if strings.Join(ids, ",") != "first,second,late" {
		t.Fatalf("order %v, want by time, then by recordedat", ids)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(b.String(), "\n"); !strings.HasPrefix(lines[0], "TIME") || !strings.Contains(lines[1], "first") {
		t.Fatalf("text:\n%s", b.String())
	}

	empty, err := Subject(context.Background(), &pages{}, schema.Naming{Prefix: "p", Stage: "dev"}, SubjectOptions{Subject: "none/1"})
	if err != nil || empty.Events == nil {
		t.Fatalf("no events: %+v, %v; want an empty, non-nil list (JSON [])", empty, err)
	}
	b.Reset()
	_ = empty.WriteText(&b)
	if b.String() != "no events for subject \"none/1\"\n" {
		t.Fatalf("text %q", b.String())
	}
	if _, err := Subject(context.Background(), &pages{}, schema.Naming{}, SubjectOptions{}); !errors.Is(err, toolkit.ErrInvalidOptions) || !strings.Contains(err.Error(), "Options.Subject: is required") {
		t.Fatalf("no subject: %v", err)
	}
}

func TestProjections(t *testing.T) {
	metric := func(date, typ, count string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(date), "sk": s("metrics-" + typ), "entityType": s("metrics"), "date": s(date), "workflowType": s(typ),
			"executionCount": &types.AttributeValueMemberN{Value: count}, "totalCost": &types.AttributeValueMemberN{Value: "0.5"}}
	}
	// Every table's scan answers the same two pages: the counts are two
	// per table, the metrics rows those of the chosen day.
	db := &pages{items: [][]map[string]types.AttributeValue{
		{metric("2026-01-05", "ldf", "3")},
		{metric("2026-01-05", "sf", "4"), metric("2026-01-04", "sf", "1")},
	}}
	n := schema.Naming{Prefix: "p", Stage: "dev"}
	sum, err := Projections(context.Background(), db, n, ProjectionsOptions{Date: "2026-01-05"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Items[schema.TableEvents] != 3 || sum.Items[schema.TableDeadLetters] != 3 || len(sum.Items) != len(schema.ProjectionTables())+2 {
		t.Fatalf("items %v", sum.Items)
	}
	if len(sum.Metrics) != 2 || sum.Metrics[0].WorkflowType != "sf" || sum.Metrics[0].ExecutionCount != 4 || sum.Metrics[1].WorkflowType != "ldf" || sum.Metrics[1].TotalCost != 0.5 {
		t.Fatalf("metrics %+v, want the day's sf row, then ldf", sum.Metrics)
	}
	var b strings.Builder
	if err := sum.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "p-dev-events      3\n") || !strings.Contains(b.String(), "2026-01-05        sf           4") {
		t.Fatalf("text:\n%s", b.String())
	}
	if _, err := Projections(context.Background(), db, n, ProjectionsOptions{Date: "yesterday"}); !errors.Is(err, toolkit.ErrInvalidOptions) || !strings.Contains(err.Error(), `summary: Options.Date: want YYYY-MM-DD, got "yesterday"`) {
		t.Fatalf("bad date: %v", err)
	}
}
