package query

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// TestRecentExecutionsPlan: without agent or status the executions pattern
// reads StatusDateIndex once per status (one partition each, the range on
// startDate, newest first), never a Scan, and refuses agent with status.
func TestRecentExecutionsPlan(t *testing.T) {
	db := &fakeAPI{}
	c := newTestClient(t, db, testKey)
	p, _ := PatternByName("executions")
	in := fakeInput{v: map[string]string{"from": "2030-01-14T00:00:00Z", "to": "2030-01-15T23:59:59Z"}, page: PageRequest{Limit: 5}}
	if _, err := p.Run(ctx, c, in); err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, q := range db.queries {
		if got := str0(q.IndexName); got != "StatusDateIndex" || str0(q.TableName) != "unit-dev-executions" || *q.ScanIndexForward {
			t.Fatalf("query on %s/%s forward %v, want StatusDateIndex newest first", str0(q.TableName), got, *q.ScanIndexForward)
		}
		if want := "#k0 = :v0 AND #k1 BETWEEN :v1 AND :v2"; str0(q.KeyConditionExpression) != want {
			t.Fatalf("key condition %q, want %q", str0(q.KeyConditionExpression), want)
		}
		statuses = append(statuses, sval(q, ":v0"))
	}
	slices.Sort(statuses) // the partitions are read in parallel
	if want := slices.Sorted(slices.Values(ExecutionStatuses)); !slices.Equal(statuses, want) {
		t.Fatalf("partitions read %v, want one Query per status %v", statuses, want)
	}
	_, err := p.Run(ctx, c, fakeInput{v: map[string]string{"agent": "a", "status": "FAILED"}})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "agent" || pe.Reason != "give at most one of <agent> or <status>" {
		t.Fatalf("agent and status: %v", err)
	}
}

func str0(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sval(q *dynamodb.QueryInput, k string) string {
	if v, ok := q.ExpressionAttributeValues[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return fmt.Sprint(q.ExpressionAttributeValues[k])
}

// formatTime is a sort key's text of t (the projector's time format).
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TestRecentExecutionsIntegration follows the recent executions of every
// agent to the end, page after page, over DynamoDB Local: every execution
// of the range exactly once, newest first (ties by executionArn,
// descending), each page within its bound of requests (one Query per
// status and round).
func TestRecentExecutionsIntegration(t *testing.T) {
	w := loadWorld(t)
	items := w.memItems(schema.TableExecutions)
	statuses := map[string]bool{}
	for _, it := range items {
		statuses[str(it, "status")] = true
	}
	if len(statuses) < 2 {
		t.Fatalf("the workload's executions have statuses %v: too few to test the merge", statuses)
	}
	ranges := []TimeRange{{}, {From: w.start.Add(6 * time.Hour), To: w.start.Add(30 * time.Hour)}, {From: w.start.Add(20 * time.Hour)}}
	for i, r := range ranges {
		want := slices.Clone(items)
		want = slices.DeleteFunc(want, func(it map[string]any) bool {
			s := str(it, "startDate")
			return (!r.From.IsZero() && s < formatTime(r.From)) || (!r.To.IsZero() && s > formatTime(r.To))
		})
		slices.SortFunc(want, func(a, b map[string]any) int {
			return -strings.Compare(str(a, "startDate")+"|"+str(a, "executionArn"), str(b, "startDate")+"|"+str(b, "executionArn"))
		})
		if len(want) == 0 {
			t.Fatalf("range %d holds no execution", i)
		}
		for _, limit := range []int{1, 7, 200} {
			t.Run(fmt.Sprintf("range %d limit %d", i, limit), func(t *testing.T) {
				var got []map[string]any
				cursor := ""
				for pages := 1; ; pages++ {
					before := w.q.Stats()
					p, err := w.q.RecentExecutions(ctx, r, PageRequest{Limit: limit, Cursor: cursor})
					if err != nil {
						t.Fatalf("page %d: %v", pages, err)
					}
					bound := int64(len(ExecutionStatuses) * w.q.cfg.MaxRequestsPerPage)
					if reqs := w.q.Stats().Sub(before).Requests; reqs > bound {
						t.Fatalf("page %d took %d requests, more than %d", pages, reqs, bound)
					}
					if len(p.Items) > limit || (p.Next != "" && len(p.Items) == 0) {
						t.Fatalf("page %d: %d items, limit %d, next %q", pages, len(p.Items), limit, p.Next)
					}
					got = append(got, p.Items...)
					if cursor = p.Next; cursor == "" || pages > 5000 {
						break
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%d executions, want %d", len(got), len(want))
				}
				for j := range want {
					if canonJSON(got[j]) != canonJSON(want[j]) {
						t.Fatalf("position %d: got %s\nwant %s", j, canonJSON(got[j]), canonJSON(want[j]))
					}
				}
			})
		}
	}
	t.Run("cursor of another range", func(t *testing.T) {
		p, err := w.q.RecentExecutions(ctx, TimeRange{}, PageRequest{Limit: 1})
		if err != nil || p.Next == "" {
			t.Fatalf("first page: %v, next %q", err, p.Next)
		}
		if _, err := w.q.RecentExecutions(ctx, ranges[1], PageRequest{Limit: 1, Cursor: p.Next}); !errors.Is(err, ErrBadCursor) {
			t.Fatalf("a cursor of another range: %v, want ErrBadCursor", err)
		}
		if _, err := w.q.ExecutionsByStatus(ctx, "SUCCEEDED", TimeRange{}, PageRequest{Limit: 1, Cursor: p.Next}); !errors.Is(err, ErrBadCursor) {
			t.Fatalf("a recent cursor given to executions by status: %v, want ErrBadCursor", err)
		}
	})
}

// TestStuckJobsCursorOutlivesTheClock: the stuck jobs' next page, asked
// for a minute later (the API's clock moved), continues from the cursor;
// a cursor of another window, or of the list without one, is refused.
func TestStuckJobsCursorOutlivesTheClock(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "7#1"}, "sk": &types.AttributeValueMemberS{Value: "v"},
		"installation_id": &types.AttributeValueMemberN{Value: "7"}, "status": &types.AttributeValueMemberS{Value: "in_progress"},
		"created_at": &types.AttributeValueMemberS{Value: "2030-01-15T01:00:00.000Z"}}
	db := &fakeAPI{pages: []*dynamodb.QueryOutput{{Items: []map[string]types.AttributeValue{key}, LastEvaluatedKey: key}}}
	c := newTestClient(t, db, testKey)
	p, _ := PatternByName("jobs")
	t0 := fakeInput{}.Now().Add(-time.Minute) // the first page, a minute before the input's clock
	first, err := c.StuckJobs(ctx, 7, 6*time.Hour, t0, PageRequest{Limit: 1})
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %v, next %q", err, first.Next)
	}
	later := fakeInput{v: map[string]string{"installation": "7", "stuckHours": "6"}, page: PageRequest{Limit: 1, Cursor: first.Next}}
	if _, err := p.Run(ctx, c, later); err != nil {
		t.Fatalf("the next page a minute later: %v", err)
	}
	last := db.queries[len(db.queries)-1]
	if sval(last, ":v2") != "2030-01-15T14:00:00.000Z" || len(last.ExclusiveStartKey) == 0 {
		t.Fatalf("second page: before %s, start %v; want the input's clock less 6 h, from the cursor", sval(last, ":v2"), last.ExclusiveStartKey)
	}
	for _, other := range []map[string]string{
		{"installation": "7", "stuckHours": "5"},
		{"installation": "7", "status": "in_progress"},
	} {
		if _, err := p.Run(ctx, c, fakeInput{v: other, page: PageRequest{Limit: 1, Cursor: first.Next}}); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%v with a 6-hour window's cursor: %v, want ErrBadCursor", other, err)
		}
	}
}
