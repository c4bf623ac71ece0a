package projector_test

import (
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// gsiShardInputs are the seeds' examples of every domain, recorded at one time.
func gsiShardInputs(t *testing.T) []projector.Input {
	t.Helper()
	rec := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var out []projector.Input
	for _, f := range []string{"seed001_albums.ndjson", "seed002_agent.ndjson", "seed003_jobs.ndjson", "seed004_messages.ndjson"} {
		for _, fe := range foldLoad(t, filepath.Join("testdata", "fold", f)) {
			e := fe.E
			r := rec
			e.RecordedAt = &r
			k, ok := projector.KindFor(e.Type)
			if !ok {
				t.Fatalf("no kind for %s", e.Type)
			}
			out = append(out, projector.Input{Event: e, Payload: fe.P, Kind: k})
		}
	}
	return out
}

// TestGSIShardsStampItems: with GSIShards 4, every item and counter row of
// executions, workflows and messages carries gsiShard = schema.ItemGSIShard
// of its key, other tables none, and without the attribute the items are
// exactly those projected with sharding off (which carry none).
func TestGSIShardsStampItems(t *testing.T) {
	in := gsiShardInputs(t)
	off, on := projector.NewMemStore(), projector.NewMemStore()
	project(t, off, projector.Config{}, in)
	project(t, on, projector.Config{GSIShards: 4}, in)
	for _, spec := range schema.Tables() {
		offItems, onItems := off.Items(spec.Logical), on.Items(spec.Logical)
		if len(offItems) != len(onItems) {
			t.Fatalf("%s: %d items off, %d on", spec.Logical, len(offItems), len(onItems))
		}
		shardsSeen := map[string]bool{}
		for id, it := range onItems {
			if _, ok := offItems[id][schema.AttrGSIShard]; ok {
				t.Errorf("%s %s: gsiShard written with sharding off", spec.Logical, id)
			}
			got, has := it[schema.AttrGSIShard]
			want, sharded := schema.ItemGSIShard(spec.Logical, it, 4)
			switch {
			case has != sharded:
				t.Errorf("%s %s: gsiShard present %v, want %v", spec.Logical, id, has, sharded)
			case sharded && !reflect.DeepEqual(got, &types.AttributeValueMemberN{Value: strconv.Itoa(want)}):
				t.Errorf("%s %s: gsiShard %v, want %d", spec.Logical, id, got, want)
			}
			if sharded {
				shardsSeen[got.(*types.AttributeValueMemberN).Value] = true
			}
			stripped := projector.CanonicalItem(it)
			if !reflect.DeepEqual(stripped, projector.CanonicalItem(offItems[id])) {
				t.Errorf("%s %s: items differ beyond gsiShard:\n on %v\noff %v", spec.Logical, id, stripped, projector.CanonicalItem(offItems[id]))
			}
		}
		if schema.HasShardedIndex(spec.Logical, 4) && len(onItems) == 0 {
			t.Errorf("%s: no items to check", spec.Logical)
		}
		t.Logf("%s: %d items, shards seen %v", spec.Logical, len(onItems), shardsSeen)
	}
	// The workflows daily metrics rows (counter rows, GSI1 "metrics") carry it too.
	row := 0
	for _, it := range on.Items(schema.TableWorkflows) {
		if e, _ := it["entityType"].(*types.AttributeValueMemberS); e != nil && e.Value == "metrics" {
			row++
			if _, ok := it[schema.AttrGSIShard]; !ok {
				t.Errorf("metrics row %v without gsiShard", it["pk"])
			}
		}
	}
	if row == 0 {
		t.Error("no workflows metrics row projected")
	}
	// Projecting the same inputs again changes nothing (the stored and the new items compare alike).
	before := on.Commits()
	out := project(t, on, projector.Config{GSIShards: 4}, in)
	if out.Changed != 0 {
		t.Errorf("a redelivery changed %d aggregates (commits %d -> %d)", out.Changed, before, on.Commits())
	}
}

func TestGSIShardsValidate(t *testing.T) {
	for _, tc := range []struct {
		shards int
		want   string
	}{
		{0, ""}, {1, ""}, {4, ""}, {16, ""},
		{17, "projector: Config.GSIShards: must be between 0 (off) and 16, got 17"},
		{-1, "projector: Config.GSIShards: must be between 0 (off) and 16, got -1"},
	} {
		c := projector.Config{GSIShards: tc.shards}
		c.SetDefaults()
		got := ""
		if err := c.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("GSIShards %d: %q, want %q", tc.shards, got, tc.want)
		}
	}
}
