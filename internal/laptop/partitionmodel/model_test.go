package partitionmodel_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/partitionmodel"
	"github.com/streamfold/streamfold/schema"
)

func item(kv ...string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{}
	for i := 0; i < len(kv); i += 2 {
		it[kv[i]] = &types.AttributeValueMemberS{Value: kv[i+1]}
	}
	return it
}

// jobs is a table like the executions table: a hash key and one index by
// status and date.
var jobs = schema.Table{
	Logical: "jobs",
	Hash:    schema.KeyAttr{Name: "id", Type: schema.String},
	Indexes: []schema.Index{{Name: "byStatus", Hash: []schema.KeyAttr{{Name: "status", Type: schema.String}}, Range: []schema.KeyAttr{{Name: "date", Type: schema.String}}}},
}

func TestWriteUnits(t *testing.T) {
	for _, c := range []struct {
		size int
		want float64
	}{{0, 1}, {1, 1}, {1024, 1}, {1025, 2}, {2048, 2}, {2049, 3}} {
		if got := partitionmodel.WriteUnits(c.size); got != c.want {
			t.Errorf("WriteUnits(%d) = %v, want %v", c.size, got, c.want)
		}
	}
}

func TestKeyOf(t *testing.T) {
	attrs := []schema.KeyAttr{{Name: "installation_id", Type: schema.Number}, {Name: "status", Type: schema.String}}
	it := item("status", "queued")
	it["installation_id"] = &types.AttributeValueMemberN{Value: "12345"}
	if got := partitionmodel.KeyOf(attrs, it); got != "12345 | queued" {
		t.Errorf("KeyOf = %q", got)
	}
	if got := partitionmodel.KeyOf(attrs, item("status", "queued")); got != "" {
		t.Errorf("KeyOf without installation_id = %q, want \"\" (not in the index)", got)
	}
}

// TestModelByHand checks the model on six writes whose units are counted by
// hand in the comments.
func TestModelByHand(t *testing.T) {
	m := partitionmodel.New([]schema.Table{jobs}, time.Second)
	m.Shard(2) // GSIShard("a", 2) = 0, GSIShard("b", 2) = 1
	pad := strings.Repeat("x", 1500)
	a := item("id", "a", "status", "RUNNING", "date", "d1")           // 22 bytes: 1 unit
	b := item("id", "b", "status", "RUNNING", "date", "d1", "p", pad) // 1,523 bytes: 2 units
	aDone := item("id", "a", "status", "DONE", "date", "d1")
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, w := range []partitionmodel.Write{
		{At: ms(200), Table: "jobs", New: a},                             // table a 1, RUNNING 1 (put)
		{At: ms(500), Table: "jobs", New: b},                             // table b 2, RUNNING 2 (put)
		{At: ms(900), Table: "jobs", Old: a, New: aDone},                 // table a 1, RUNNING 1 (delete), DONE 1 (put)
		{At: ms(1200), Table: "jobs", Old: b, New: b, Tx: true},          // table b 2x2, RUNNING 2x2 (rewrite in place)
		{At: ms(1500), Table: "jobs", Old: aDone, New: a, Refused: true}, // table a 1, no index write
		{At: ms(1700), Table: "jobs", New: item("id", "c")},              // table c 1, not in the index
	} {
		if err := m.Record(w); err != nil {
			t.Fatal(err)
		}
	}
	if partitionmodel.GSIShard("a", 2) != 0 || partitionmodel.GSIShard("b", 2) != 1 {
		t.Fatal("GSIShard changed: the cases below assume a in shard 0 and b in shard 1")
	}
	got := m.Reports([]schema.Table{jobs}, 2, false)
	// Table: second 0 a=2 b=2, second 1 b=4 a=1 c=1 (10 units in 2 s).
	// Index: second 0 RUNNING=1+2+1=4 DONE=1, second 1 RUNNING=4 (9 units in 2 s).
	want := []partitionmodel.Report{
		{Table: "jobs", Keys: 3, TotalPerSecond: 5, Max: 4, Hot: "b", MaxWindow: 1, MeanOfHot: 3,
			Top: []partitionmodel.Units{{Table: "jobs", Key: "b", Units: 4}, {Table: "jobs", Key: "a", Units: 2}}},
		{Table: "jobs", Index: "byStatus", Keys: 2, TotalPerSecond: 4.5, Max: 4, Hot: "RUNNING", MaxWindow: 0, MeanOfHot: 4,
			Top: []partitionmodel.Units{{Table: "jobs", Index: "byStatus", Key: "RUNNING", Units: 4}, {Table: "jobs", Index: "byStatus", Key: "DONE", Units: 1}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reports:\n got %+v\nwant %+v", got, want)
	}
	// Sharded into 2: second 0 RUNNING#0=1+1 (a's put and delete)
	// RUNNING#1=2 (b's put) DONE#0=1, second 1 RUNNING#1=4.
	got = m.Reports([]schema.Table{jobs}, 2, true)
	want[1] = partitionmodel.Report{Table: "jobs", Index: "byStatus", Keys: 3, TotalPerSecond: 4.5, Max: 4, Hot: "RUNNING#1", MaxWindow: 1, MeanOfHot: 3,
		Top: []partitionmodel.Units{{Table: "jobs", Index: "byStatus", Key: "RUNNING#1", Units: 4}, {Table: "jobs", Index: "byStatus", Key: "RUNNING#0", Units: 2}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sharded reports:\n got %+v\nwant %+v", got, want)
	}
	if err := m.Record(partitionmodel.Write{Table: "nope", New: a}); err == nil {
		t.Error("a write to an unknown table was accepted")
	}
}

// TestRunIsDeterministic runs a small workload twice: the reports are
// identical, every domain's tables are written, and the event table took
// a write per event.
func TestRunIsDeterministic(t *testing.T) {
	run := func() ([]partitionmodel.Report, []partitionmodel.Report, partitionmodel.Stats) {
		before, after, st, err := partitionmodel.Simulate(context.Background(), partitionmodel.Traffic{Seed: 3, Rate: 500, Seconds: 4, Shards: 4, BatchSize: 100, Chunk: 2}, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		return before, after, st
	}
	r1, a1, s1 := run()
	r2, a2, s2 := run()
	if !reflect.DeepEqual(r1, r2) || !reflect.DeepEqual(a1, a2) || s1 != s2 {
		t.Fatalf("two runs differ:\n%+v %+v\n%+v %+v", s1, r1, s2, r2)
	}
	if len(a1) != len(r1) {
		t.Fatalf("%d reports after, %d before", len(a1), len(r1))
	}
	for i, a := range a1 {
		b := r1[i]
		if a.Table != b.Table || a.Index != b.Index || a.Max > b.Max || (a.Sharded > 0) != (b.Index != "" && b.Max > partitionmodel.ShardAbove) {
			t.Errorf("after %+v does not follow before %+v", a, b)
		}
	}
	if s1.Events != 2000 || s1.Failed+s1.Poison != 0 || s1.Batches == 0 {
		t.Fatalf("stats %+v", s1)
	}
	written := map[string]bool{}
	for _, r := range r1 {
		written[r.Table+"/"+r.Index] = true
	}
	for _, want := range []string{"events/", "aggregates/", "executions/StatusDateIndex", "messages/status-created_date-index", "workflow-jobs/GSI2", "workflows/GSI1", "metrics/"} {
		if !written[want] {
			t.Errorf("no writes recorded on %s", want)
		}
	}
}
