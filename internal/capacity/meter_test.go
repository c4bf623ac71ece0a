package capacity_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/capacity"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	return mustJSON(t, a) == mustJSON(t, b)
}

// TestSnapshotJSON pins the JSON shape that `streamfold run --json` and the
// append summaries print.
func TestSnapshotJSON(t *testing.T) {
	m := capacity.NewMeter()
	// A TransactWriteItems reply with INDEXES over two tables.
	m.Record("TransactWriteItems",
		types.ConsumedCapacity{TableName: aws.String("jobs"), CapacityUnits: aws.Float64(12),
			Table:                  &types.Capacity{CapacityUnits: aws.Float64(6)},
			GlobalSecondaryIndexes: map[string]types.Capacity{"by-status": {CapacityUnits: aws.Float64(6)}}},
		types.ConsumedCapacity{TableName: aws.String("metrics"), CapacityUnits: aws.Float64(2)},
	)
	// A TOTAL reply of a read: all read units.
	m.Record("BatchGetItem", types.ConsumedCapacity{TableName: aws.String("jobs"), CapacityUnits: aws.Float64(1.5)})
	m.Failed("PutItem")
	got := mustJSON(t, m.Snapshot().ForRecords(4))
	want := `{
  "writeUnits": 14,
  "readUnits": 1.5,
  "perRecord": {
    "write": 3.5,
    "read": 0.375,
    "dollarsPerMillion": 2.2344
  },
  "byTable": {
    "jobs": {
      "writeUnits": 12,
      "readUnits": 1.5,
      "indexes": {
        "by-status": {
          "writeUnits": 6,
          "readUnits": 0
        }
      }
    },
    "metrics": {
      "writeUnits": 2,
      "readUnits": 0
    }
  },
  "byOperation": {
    "BatchGetItem": {
      "writeUnits": 0,
      "readUnits": 1.5,
      "calls": 1
    },
    "PutItem": {
      "writeUnits": 0,
      "readUnits": 0,
      "calls": 1,
      "failed": 1
    },
    "TransactWriteItems": {
      "writeUnits": 14,
      "readUnits": 0,
      "calls": 1
    }
  },
  "dollars": 0.0000089375
}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		op   string
		cc   types.ConsumedCapacity
		want capacity.TableUnits
	}{
		{"TOTAL write", "PutItem", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(3)},
			capacity.TableUnits{Units: capacity.Units{Write: 3}}},
		{"TOTAL read", "Query", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(0.5)},
			capacity.TableUnits{Units: capacity.Units{Read: 0.5}}},
		{"read and write given", "TransactWriteItems", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(5), ReadCapacityUnits: aws.Float64(1), WriteCapacityUnits: aws.Float64(4)},
			capacity.TableUnits{Units: capacity.Units{Write: 4, Read: 1}}},
		{"read and write given as zero: classified by operation", "GetItem", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(1), ReadCapacityUnits: aws.Float64(0), WriteCapacityUnits: aws.Float64(0)},
			capacity.TableUnits{Units: capacity.Units{Read: 1}}},
		{"INDEXES: base and GSI and LSI", "UpdateItem", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(4),
			Table:                  &types.Capacity{CapacityUnits: aws.Float64(2)},
			GlobalSecondaryIndexes: map[string]types.Capacity{"g": {CapacityUnits: aws.Float64(1)}},
			LocalSecondaryIndexes:  map[string]types.Capacity{"l": {CapacityUnits: aws.Float64(1)}}},
			capacity.TableUnits{Units: capacity.Units{Write: 4}, Indexes: map[string]capacity.Units{"g": {Write: 1}, "l": {Write: 1}}}},
		{"INDEXES without the table's share: the rest of the total", "PutItem", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(6),
			GlobalSecondaryIndexes: map[string]types.Capacity{"g": {CapacityUnits: aws.Float64(2)}}},
			capacity.TableUnits{Units: capacity.Units{Write: 6}, Indexes: map[string]capacity.Units{"g": {Write: 2}}}},
		{"no capacity at all (NONE)", "PutItem", types.ConsumedCapacity{TableName: aws.String("t")},
			capacity.TableUnits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := capacity.NewMeter()
			m.Record(tt.op, tt.cc)
			s := m.Snapshot()
			if got := s.ByTable["t"]; !equalJSON(t, got, tt.want) {
				t.Fatalf("got %s, want %s", mustJSON(t, got), mustJSON(t, tt.want))
			}
			if !equalJSON(t, s.Units, tt.want.Units) || !equalJSON(t, s.ByOperation[tt.op].Units, tt.want.Units) {
				t.Fatalf("totals %s and operation %s differ from the table's %s", mustJSON(t, s.Units), mustJSON(t, s.ByOperation[tt.op]), mustJSON(t, tt.want.Units))
			}
		})
	}
}

func TestPer(t *testing.T) {
	s := capacity.Snapshot{Units: capacity.Units{Write: 3, Read: 1}}
	if got := s.Per(0); got != (capacity.Rate{}) {
		t.Errorf("Per(0) = %+v, want zero", got)
	}
	// 1.5 write units and 0.5 read units per record: 1.5×0.625 + 0.5×0.125 dollars per million.
	if got, want := s.Per(2), (capacity.Rate{Write: 1.5, Read: 0.5, DollarsPerMillion: 1}); got != want {
		t.Errorf("Per(2) = %+v, want %+v", got, want)
	}
	if s.ForEvents(2).PerRecord != nil || s.ForEvents(2).PerEvent == nil || s.ForRecords(2).PerEvent != nil {
		t.Error("ForEvents sets perEvent only, ForRecords perRecord only")
	}
}

func TestTrimTablePrefix(t *testing.T) {
	s := capacity.Snapshot{ByTable: map[string]capacity.TableUnits{
		"sf-dev-jobs":   {Units: capacity.Units{Write: 2}, Indexes: map[string]capacity.Units{"g": {Write: 1}}},
		"sf-dev-events": {Units: capacity.Units{Write: 1}},
		"events":        {Units: capacity.Units{Read: 1}, Indexes: map[string]capacity.Units{"h": {Read: 1}}},
	}}
	got := s.TrimTablePrefix("sf-dev-").ByTable
	want := map[string]capacity.TableUnits{
		"jobs":   {Units: capacity.Units{Write: 2}, Indexes: map[string]capacity.Units{"g": {Write: 1}}},
		"events": {Units: capacity.Units{Write: 1, Read: 1}, Indexes: map[string]capacity.Units{"h": {Read: 1}}},
	}
	if !equalJSON(t, got, want) {
		t.Fatalf("got %s, want %s", mustJSON(t, got), mustJSON(t, want))
	}
	if _, ok := s.ByTable["sf-dev-jobs"]; !ok {
		t.Error("TrimTablePrefix changed the snapshot it was called on")
	}
}

func TestNilMeter(t *testing.T) {
	var m *capacity.Meter
	m.Record("PutItem", types.ConsumedCapacity{CapacityUnits: aws.Float64(1)})
	m.Failed("PutItem")
	if s := m.Snapshot(); s.Write != 0 || len(s.ByTable) != 0 {
		t.Errorf("a nil meter recorded %+v", s)
	}
}

func TestMeterConcurrent(t *testing.T) {
	m := capacity.NewMeter()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				m.Record("PutItem", types.ConsumedCapacity{TableName: aws.String("t"), CapacityUnits: aws.Float64(1)})
				_ = m.Snapshot()
			}
		})
	}
	wg.Wait()
	if s := m.Snapshot(); s.Write != 8000 || s.ByOperation["PutItem"].Calls != 8000 || s.ByTable["t"].Write != 8000 {
		t.Errorf("8×1000 one-unit puts: %+v", s)
	}
}

func TestPrice(t *testing.T) {
	// A million of each kind of unit at the documented prices.
	if got := capacity.Price(capacity.Units{Write: 1e6, Read: 1e6}); got != 0.75 {
		t.Errorf("Price = %v, want 0.75", got)
	}
}

func ExampleMeter() {
	m := capacity.NewMeter()
	// What a metered client records for a 2.5 KB PutItem, as DynamoDB replies.
	m.Record("PutItem", types.ConsumedCapacity{TableName: aws.String("events"), CapacityUnits: aws.Float64(3)})
	m.Record("GetItem", types.ConsumedCapacity{TableName: aws.String("events"), CapacityUnits: aws.Float64(0.5)})
	s := m.Snapshot().ForRecords(1)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	_ = enc.Encode(s.PerRecord)
	fmt.Print(b.String())
	fmt.Printf("%.2f write + %.2f read units per record: $%.4f per million records (%s)\n",
		s.PerRecord.Write, s.PerRecord.Read, s.PerRecord.DollarsPerMillion, capacity.PriceNote)
	// Output:
	// {"write":3,"read":0.5,"dollarsPerMillion":1.9375}
	// 3.00 write + 0.50 read units per record: $1.9375 per million records (on-demand, Standard table class, us-east-1, prices of 2024-11-01)
}
