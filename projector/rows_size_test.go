package projector

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// TestRowBoundIsAnUpperBound: the cheap bound that lets dropOversizeRows
// skip the exact computation is never below the row as stored, for a new
// row and for a row moved again, with long attributes and stamps.
func TestRowBoundIsAnUpperBound(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": avS("12345#777#1"), "sk": avS("v")}
	at := time.Date(2026, 1, 15, 10, 0, 0, 123456789, time.UTC)
	contrib := func(n int, id string) Contribution {
		return Contribution{
			Table: schema.TableWorkflowRuns, Key: key,
			Attrs:    map[string]types.AttributeValue{"workflow_name": avS(strings.Repeat("w", n)), "head_branch": avS(strings.Repeat("b", n/2)), "ttl": avN(1780000000)},
			Stamps:   map[string]Stamp{"workflow_name": {Rank: 3, Time: at, ID: id}, "head_branch": {Time: at, ID: id}, "ttl": {Time: at}},
			Counters: map[string]int64{"total_jobs": 1, "completed_jobs": 1, "failed_jobs": 0, "success_jobs": 1, "waiting_jobs": 0},
		}
	}
	var cur Row
	for i, d := range []Contribution{contrib(10, "a"), contrib(1000, strings.Repeat("i", 200)), contrib(5, "c"), contrib(100<<10, "d")} {
		item, err := nextRow(d.Table, cur.Item, d)
		if err != nil {
			t.Fatal(err)
		}
		r, err := rowItem(RowPut{Table: d.Table, Item: item, Expected: cur.Version})
		if err != nil {
			t.Fatal(err)
		}
		if b := rowBound(cur, d); b < r.size {
			t.Fatalf("step %d: bound %d below the stored size %d", i, b, r.size)
		}
		cur = Row{Table: d.Table, Key: key, Item: r.item, Version: cur.Version + 1}
	}
}
