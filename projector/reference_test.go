package projector_test

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// projectionTables are the tables the projector writes (besides its own state).
var projectionTables = schema.ProjectionTables()

// view is every projection item, by ItemID, in canonical form.
type view map[string]map[string]any

// counterNames lists, per counter row, the names of its counters.
type counterNames map[string]map[string]bool

// reference folds the set of events directly — each subject's events in
// time order into a fresh aggregate — and sums contributions: what the
// projections must equal however the events were delivered.
func reference(t *testing.T, events []schema.Event) (view, counterNames) {
	t.Helper()
	bySubject := map[string][]schema.Event{}
	for _, e := range events {
		bySubject[e.Subject] = append(bySubject[e.Subject], e)
	}
	out := view{}
	counterRows := counterNames{}
	sums := map[string]*projector.Contribution{}
	var runs, jobs []map[string]types.AttributeValue
	for _, evs := range bySubject {
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
		var agg projector.Aggregate
		for _, e := range evs {
			e := e
			p, err := schema.Validate(&e)
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			if sc, ok := p.(*schema.ExecutionStatusChange); ok && !sc.IsAgent() {
				continue
			}
			k, ok := projector.KindFor(e.Type)
			if !ok {
				t.Fatalf("reference: no kind for %s", e.Type)
			}
			if agg == nil {
				agg = projector.NewAggregate(k)
			}
			agg.Apply(e, p)
		}
		if agg == nil {
			continue
		}
		for _, it := range agg.Items() {
			out[projector.ItemID(it.Table, it.Item)] = projector.CanonicalItem(it.Item)
			runs, jobs = collectRunItems(it.Table, it.Item, runs, jobs)
		}
		for _, c := range agg.Contributions() {
			s, ok := sums[c.RowID()]
			if !ok {
				s = &projector.Contribution{Table: c.Table, Key: c.Key, Attrs: map[string]types.AttributeValue{}, Stamps: map[string]projector.Stamp{}, Counters: map[string]int64{}, Scale: map[string]int{}}
				sums[c.RowID()] = s
			}
			// A row's static attribute: the value with the greatest stamp
			// among the contributors that know it.
			for k, v := range c.Attrs {
				st := c.Stamps[k]
				if _, have := s.Attrs[k]; have && st.Compare(s.Stamps[k]) < 0 {
					continue
				}
				s.Attrs[k], s.Stamps[k] = v, st
			}
			for k, v := range c.Counters {
				s.Counters[k] += v
			}
			for k, v := range c.Scale {
				s.Scale[k] = v
			}
		}
	}
	for _, s := range sums {
		row := map[string]types.AttributeValue{}
		for k, v := range s.Attrs {
			row[k] = v
		}
		for k, v := range s.Key {
			row[k] = v
		}
		for k, v := range s.Counters {
			if v != 0 {
				row[k] = &types.AttributeValueMemberN{Value: projector.FormatScaled(v, s.Scale[k])}
			}
		}
		projector.ApplyDerived(row, projector.DeriveRow(s.Table, row))
		id := projector.ItemID(s.Table, s.Key)
		counterRows[id] = map[string]bool{}
		for k := range s.Counters {
			counterRows[id][k] = true
		}
		if prev, ok := out[id]; ok {
			t.Fatalf("reference: counter row %s collides with item %v", id, prev)
		}
		out[id] = projector.CanonicalItem(row)
	}
	addRunSummaries(t, out, runs, jobs)
	return out, counterRows
}

// runSummaryTable names the rows a view holds for run summaries, as
// readers sum them (schema.SummarizeRuns of the raw workflow-runs and
// workflow-jobs items): the id of run pk's is runSummaryTable+"|"+pk.
const runSummaryTable = "run-summary"

// collectRunItems appends a raw item of table to runs or jobs, the items
// run summaries are summed from.
func collectRunItems(table string, it map[string]types.AttributeValue, runs, jobs []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, []map[string]types.AttributeValue) {
	switch table {
	case schema.TableWorkflowRuns:
		runs = append(runs, it)
	case schema.TableWorkflowJobs:
		jobs = append(jobs, it)
	}
	return runs, jobs
}

// addRunSummaries adds to v the run summaries summed from the raw items.
func addRunSummaries(t *testing.T, v view, runs, jobs []map[string]types.AttributeValue) {
	t.Helper()
	sums, err := schema.SummarizeRuns(runs, jobs)
	if err != nil {
		t.Fatalf("run summaries: %v", err)
	}
	for _, s := range sums {
		v[runSummaryTable+"|"+s["pk"].(*types.AttributeValueMemberS).Value] = projector.CanonicalItem(s)
	}
}

// actual reads every projection table of a DynamoDB store, and sums the
// run summaries from them.
func actual(t *testing.T, c *awsclient.Clients, n schema.Naming, counterRows counterNames) view {
	t.Helper()
	out := view{}
	var runs, jobs []map[string]types.AttributeValue
	for _, table := range projectionTables {
		p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(n.Table(table)), ConsistentRead: aws.Bool(true)})
		for p.HasMorePages() {
			page, err := p.NextPage(context.Background())
			if err != nil {
				t.Fatalf("scan %s: %v", table, err)
			}
			for _, it := range page.Items {
				out[projector.ItemID(table, it)] = projector.CanonicalItem(it)
				runs, jobs = collectRunItems(table, it, runs, jobs)
			}
		}
	}
	addRunSummaries(t, out, runs, jobs)
	return dropZeroCounters(out, counterRows)
}

// actualMem reads every projection table of a MemStore, and sums the run
// summaries from them.
func actualMem(t *testing.T, m *projector.MemStore, counterRows counterNames) view {
	t.Helper()
	out := view{}
	var runs, jobs []map[string]types.AttributeValue
	for _, table := range projectionTables {
		for _, it := range m.Items(table) {
			out[projector.ItemID(table, it)] = projector.CanonicalItem(it)
			runs, jobs = collectRunItems(table, it, runs, jobs)
		}
	}
	addRunSummaries(t, out, runs, jobs)
	return dropZeroCounters(out, counterRows)
}

// dropZeroCounters removes numeric attributes equal to zero from counter
// rows: a counter that went up and back down reads 0 where the reference
// never wrote it.
func dropZeroCounters(v view, counterRows counterNames) view {
	zero := "N:" + new(big.Rat).RatString()
	for id, it := range v {
		names := counterRows[id]
		for k, a := range it {
			if s, ok := a.(string); ok && s == zero && names[k] {
				delete(it, k)
			}
		}
	}
	return v
}

// compareViews fails with the first few differences.
func compareViews(t *testing.T, want, got view) {
	t.Helper()
	var diffs []string
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			diffs = append(diffs, "missing "+id)
			continue
		}
		if !reflect.DeepEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			diffs = append(diffs, "differs "+id+"\n  want "+string(wj)+"\n   got "+string(gj))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			diffs = append(diffs, "unexpected "+id)
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		if len(diffs) > 8 {
			diffs = append(diffs[:8], "...")
		}
		t.Fatalf("%d projection differences from the reference fold:\n%s", len(diffs), joinLines(diffs))
	}
}

func joinLines(s []string) string {
	out := ""
	for _, l := range s {
		out += l + "\n"
	}
	return out
}
