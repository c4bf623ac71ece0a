package query

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query/querytest"
	"github.com/streamfold/streamfold/schema"
)

// testShards is the shard count of the sharded side of the comparison.
const testShards = 4

// shardTables creates every table of schema.TablesFor(shards) under a fresh
// prefix, deleted when the test ends.
func shardTables(t *testing.T, c *awsclient.Clients, shards int) schema.Naming {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := schema.Naming{Prefix: "s" + hex.EncodeToString(b[:]), Stage: "dev"}
	ctx := context.Background()
	for _, spec := range schema.TablesFor(shards) {
		if _, err := c.DynamoDB.CreateTable(ctx, spec.CreateTableInput(n.Table(spec.Logical))); err != nil {
			t.Fatalf("create %s: %v", n.Table(spec.Logical), err)
		}
	}
	t.Cleanup(func() {
		for _, spec := range schema.Tables() {
			_, _ = c.DynamoDB.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n.Table(spec.Logical))})
		}
	})
	return n
}

// loadSharded projects inputs into the tables of n with the given shard count.
func loadSharded(t *testing.T, c *awsclient.Clients, n schema.Naming, shards int, inputs []projector.Input) *Client {
	t.Helper()
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	p, err := projector.New(store, projector.Config{Concurrency: 8, MaxFutureSkew: querytest.FixtureSkew, GSIShards: shards})
	if err != nil {
		t.Fatal(err)
	}
	if out := p.Project(context.Background(), inputs); len(out.Failed)+len(out.Poison)+len(out.Quarantined) > 0 {
		t.Fatalf("project (%d shards): failed %v, poison %v, quarantined %d", shards, out.Failed, out.Poison, len(out.Quarantined))
	}
	q, err := New(c.DynamoDB, n, Config{CursorKey: testKey, GSIShards: shards, JobFold: testJobFold})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// shardCase is one list pattern, fetched from a client.
type shardCase struct {
	name  string
	fetch func(c *Client, p PageRequest) (Page, error)
	// order names the attributes the list is ordered by (the index's
	// range key): items with equal values may come in any order.
	order []string
	// filtered is set when the pattern filters (FilterExpression): its
	// pages may end early at MaxRequestsPerPage, differently on both sides.
	filtered bool
}

// pagesOf follows a list with a page size to its end, or to maxPages
// pages.
func pagesOf(t *testing.T, c *Client, sc shardCase, limit, maxPages int) [][]map[string]any {
	t.Helper()
	var pages [][]map[string]any
	cursor := ""
	for i := 0; ; i++ {
		if i == maxPages {
			return pages
		}
		p, err := sc.fetch(c, PageRequest{Limit: limit, Cursor: cursor})
		if err != nil {
			t.Fatalf("%s (limit %d, page %d): %v", sc.name, limit, i, err)
		}
		if len(p.Items) > limit {
			t.Fatalf("%s: page of %d items, limit %d", sc.name, len(p.Items), limit)
		}
		if len(p.Items) > 0 {
			pages = append(pages, p.Items)
		}
		if p.Next == "" {
			return pages
		}
		cursor = p.Next
	}
}

func orderKey(it map[string]any, attrs []string) string {
	var parts []string
	for _, a := range attrs {
		parts = append(parts, canonJSON(it[a]))
	}
	return strings.Join(parts, "|")
}

// TestShardedQueriesMatchUnsharded loads the same simulated data into a
// set of unsharded tables and a set sharded into 4 (tables from
// schema.TablesFor(4), items with gsiShard), and checks, for every pattern
// on a sharded index and page sizes 1 (the first 30 pages), 7 and 100, that the sharded client
// returns the same pages: as many, of the same sizes, whose items
// concatenated are the unsharded list (same items, same order of the index
// sort key; items with an equal sort key may be permuted, as DynamoDB does
// not order them), each exactly once (the cursors resume where they
// stopped). Empty pages (the unsharded side's last page when the list ends
// exactly at a page boundary) are left out of the comparison. MessageStats
// (all shards added up) must be equal too.
func TestShardedQueriesMatchUnsharded(t *testing.T) {
	c := testenv.Clients(t)
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	evs, _, err := simulate.Generate(simulate.Config{Seed: 23, Events: 2500, Start: start, Days: 2, Order: simulate.OrderSubject})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded now, as env_test's world: items expire 90 days after their
	// events were recorded, and DynamoDB Local's TTL would delete items
	// recorded in January while the test runs (on one side and not yet on
	// the other).
	inputs, err := querytest.Inputs(evs, time.Now().UTC().Truncate(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	plain := loadSharded(t, c, shardTables(t, c, 0), 0, inputs)
	sharded := loadSharded(t, c, shardTables(t, c, testShards), testShards, inputs)

	// The values the patterns are asked for: every one in the data.
	mem := projector.NewMemStore()
	if err := querytest.Project(context.Background(), mem, inputs); err != nil {
		t.Fatal(err)
	}
	values := func(table, attr string) []string {
		set := map[string]bool{}
		for _, it := range mem.Items(table) {
			if s, ok := Plain(it)[attr].(string); ok && s != "" {
				set[s] = true
			}
		}
		out := make([]string, 0, len(set))
		for s := range set {
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	var cases []shardCase
	for _, a := range values(schema.TableExecutions, "agentName") {
		cases = append(cases, shardCase{name: "executions by agent " + a, order: []string{"startDate"},
			fetch: func(c *Client, p PageRequest) (Page, error) {
				return c.ExecutionsByAgent(context.Background(), a, TimeRange{}, p)
			}})
	}
	for _, s := range ExecutionStatuses {
		cases = append(cases, shardCase{name: "executions by status " + s, order: []string{"startDate"},
			fetch: func(c *Client, p PageRequest) (Page, error) {
				return c.ExecutionsByStatus(context.Background(), s, TimeRange{}, p)
			}})
	}
	cases = append(cases, shardCase{name: "recent executions", order: []string{"startDate"},
		fetch: func(c *Client, p PageRequest) (Page, error) {
			return c.RecentExecutions(context.Background(), TimeRange{}, p)
		}})
	for _, wt := range append([]string{""}, WorkflowTypes...) {
		cases = append(cases,
			shardCase{name: "running executions " + wt, order: []string{"createdAt"},
				fetch: func(c *Client, p PageRequest) (Page, error) { return c.RunningExecutions(context.Background(), wt, p) }},
			shardCase{name: "pending tasks " + wt, order: []string{"createdAt"},
				fetch: func(c *Client, p PageRequest) (Page, error) { return c.PendingTasks(context.Background(), wt, p) }})
		if wt != "" {
			cases = append(cases, shardCase{name: "metrics series " + wt, order: []string{"createdAt"},
				fetch: func(c *Client, p PageRequest) (Page, error) {
					return c.MetricsSeries(context.Background(), wt, TimeRange{}, p)
				}})
		}
	}
	msgCase := func(name string, f MessageFilter, filtered bool) shardCase {
		return shardCase{name: "messages " + name, order: []string{"created_date"}, filtered: filtered,
			fetch: func(c *Client, p PageRequest) (Page, error) { return c.Messages(context.Background(), f, p) }}
	}
	for _, st := range values(schema.TableMessages, "stage") {
		cases = append(cases, msgCase("stage="+st, MessageFilter{Stage: st}, false))
	}
	for _, st := range MessageStatuses {
		cases = append(cases, msgCase("status="+st, MessageFilter{Status: st}, false))
	}
	for _, ty := range values(schema.TableMessages, "message_type") {
		cases = append(cases, msgCase("type="+ty, MessageFilter{Type: ty}, false))
	}
	cases = append(cases, msgCase("stage=prod,status=completed", MessageFilter{Stage: "prod", Status: "completed"}, true))

	nonEmpty, ties := 0, 0
	for _, sc := range cases {
		// The whole list, unsharded: the reference.
		var want []map[string]any
		for _, pg := range pagesOf(t, plain, sc, 200, -1) {
			want = append(want, pg...)
		}
		if len(want) > 0 {
			nonEmpty++
		}
		for i := 1; i < len(want); i++ {
			if orderKey(want[i], sc.order) == orderKey(want[i-1], sc.order) {
				ties++
			}
		}
		for _, limit := range []int{1, 7, 100} {
			// Page size 1 follows the first 30 pages only (time).
			maxPages := -1
			if limit == 1 {
				maxPages = 30
			}
			a, b := pagesOf(t, plain, sc, limit, maxPages), pagesOf(t, sharded, sc, limit, maxPages)
			if !sc.filtered {
				if len(a) != len(b) {
					t.Errorf("%s, limit %d: %d pages unsharded, %d sharded", sc.name, limit, len(a), len(b))
					continue
				}
				for i := range a {
					if len(a[i]) != len(b[i]) {
						t.Errorf("%s, limit %d: page %d has %d items unsharded, %d sharded", sc.name, limit, i, len(a[i]), len(b[i]))
					}
				}
			}
			var got []map[string]any
			for _, pg := range b {
				got = append(got, pg...)
			}
			if maxPages > 0 && !sc.filtered {
				compareLists(t, sc, limit, want[:min(len(want), maxPages)], got)
				continue
			}
			if maxPages > 0 {
				continue // a filtered list's first pages may differ in size
			}
			compareLists(t, sc, limit, want, got)
		}
	}
	if nonEmpty < len(cases)/2 {
		t.Errorf("only %d of %d patterns have items: the data set does not exercise them", nonEmpty, len(cases))
	}
	t.Logf("%d patterns (%d non-empty), page sizes 1, 7, 100; %d adjacent equal sort keys", len(cases), nonEmpty, ties)

	// Observed reads the ends of every shard.
	obs1, err := plain.Observed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	obs2, err := sharded.Observed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if canonJSON(obs1) != canonJSON(obs2) || obs1.Executions.Newest == "" || obs1.Messages.Newest == "" {
		t.Errorf("observed unsharded %s\n  sharded %s", canonJSON(obs1), canonJSON(obs2))
	}

	// MessageStats reads every shard and adds them up.
	from, to := start, start.Add(48*time.Hour)
	ms1, err := plain.MessageStats(context.Background(), "", from, to)
	if err != nil {
		t.Fatal(err)
	}
	ms2, err := sharded.MessageStats(context.Background(), "", from, to)
	if err != nil {
		t.Fatal(err)
	}
	if canonJSON(ms1) != canonJSON(ms2) {
		t.Errorf("MessageStats differ:\nunsharded %s\n  sharded %s", canonJSON(ms1), canonJSON(ms2))
	}

	// A cursor of one shard count is refused by the other.
	p, err := plain.ExecutionsByStatus(context.Background(), "SUCCEEDED", TimeRange{}, PageRequest{Limit: 1})
	if err != nil || p.Next == "" {
		t.Fatalf("a first page with a cursor: %v %q", err, p.Next)
	}
	if _, err := sharded.ExecutionsByStatus(context.Background(), "SUCCEEDED", TimeRange{}, PageRequest{Limit: 1, Cursor: p.Next}); err == nil {
		t.Error("an unsharded cursor was accepted by a sharded client")
	}
}

// compareLists checks that got is want: the same sequence of sort keys and
// the same items, each once.
func compareLists(t *testing.T, sc shardCase, limit int, want, got []map[string]any) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("%s, limit %d: %d items sharded, %d unsharded", sc.name, limit, len(got), len(want))
		return
	}
	for i := range want {
		if w, g := orderKey(want[i], sc.order), orderKey(got[i], sc.order); w != g {
			t.Errorf("%s, limit %d: item %d sorts by %s sharded, %s unsharded", sc.name, limit, i, g, w)
			return
		}
	}
	all := func(l []map[string]any) []string {
		out := make([]string, len(l))
		for i, it := range l {
			out[i] = canonJSON(it)
		}
		sort.Strings(out)
		return out
	}
	w, g := all(want), all(got)
	for i := range w {
		if w[i] != g[i] {
			t.Errorf("%s, limit %d: items differ:\nunsharded %s\n  sharded %s", sc.name, limit, w[i], g[i])
			return
		}
	}
}
