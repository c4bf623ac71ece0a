package archiver

import (
	"encoding/json"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/golden"
)

// TestTablesJSON keeps terraform/generated/iceberg_tables.json, which
// Terraform reads for the table names, equal to Tables() and their Iceberg
// schemas.
func TestTablesJSON(t *testing.T) {
	got, err := DocJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "../terraform/generated/iceberg_tables.json", got)

	var doc TablesDoc
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Format != "iceberg" || doc.Partition != "day(event_time)" || len(doc.Tables) != len(Tables()) {
		t.Fatalf("doc = %+v", doc)
	}
	for _, tb := range Tables() {
		td := doc.Tables[tb.Name]
		if td.Doc != tb.Doc || len(td.Columns) != len(tb.Columns) {
			t.Fatalf("table %s: %+v", tb.Name, td)
		}
		ids := map[int]bool{}
		for i, c := range td.Columns {
			if ids[c.ID] || c.ID != i+1 {
				t.Errorf("%s column %s: id %d; ids must be 1..n without gaps", tb.Name, c.Name, c.ID)
			}
			ids[c.ID] = true
			if c.Name == "event_time" && (c.Type != "timestamptz" || !c.Required) {
				t.Errorf("%s event_time: %+v; the partition source must be a required timestamptz", tb.Name, c)
			}
		}
	}
}
