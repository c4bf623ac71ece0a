package archiver

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestGlueSchema keeps terraform/generated/glue_tables.json, which
// Terraform reads to declare the Glue tables, equal to Tables().
func TestGlueSchema(t *testing.T) {
	got, err := GlueJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "../terraform/generated/glue_tables.json", got)

	// The shape Terraform relies on.
	var doc struct {
		Tables map[string]struct {
			Doc     string `json:"doc"`
			Columns []struct {
				Name, Type, Comment string
			} `json:"columns"`
		} `json:"tables"`
		PartitionKeys []struct{ Name, Type string } `json:"partition_keys"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables() {
		gt, ok := doc.Tables[tb.Name]
		if !ok || gt.Doc != tb.Doc || len(gt.Columns) != len(tb.Columns) {
			t.Fatalf("table %s: %+v", tb.Name, gt)
		}
		for i, c := range tb.Columns {
			if g := gt.Columns[i]; g.Name != c.Name || g.Type != c.Type || g.Comment != c.Comment {
				t.Errorf("%s column %d: %+v, want %+v", tb.Name, i, g, c)
			}
		}
	}
	if len(doc.Tables) != len(Tables()) {
		t.Errorf("%d tables in the JSON", len(doc.Tables))
	}
	if len(doc.PartitionKeys) != 1 || doc.PartitionKeys[0].Name != "event_date" || doc.PartitionKeys[0].Type != "string" {
		t.Errorf("partition_keys = %+v", doc.PartitionKeys)
	}
	if !slices.Contains([]string{"_symlink/"}, Glue().Storage.LocationDir) {
		t.Errorf("location dir %q", Glue().Storage.LocationDir)
	}
}
