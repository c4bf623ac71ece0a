package schema

import (
	"bytes"
	"encoding/json"
)

// TerraformTablesFile is the document Terraform reads (jsondecode) to
// declare the DynamoDB tables: terraform/generated/dynamodb_tables.json,
// written by `go test ./schema -run TestTerraformTablesJSON -update` from
// TablesFor, so the tables are specified once (here) and Terraform only
// iterates (terraform/main.tf, one aws_dynamodb_table per entry).
// GSIShardsOff is TablesFor(0) (gsi_shards 0 or 1, the seeds' indexes);
// GSIShardsOn is TablesFor(n) for any n > 1 (the sharded variants: the
// shard count does not change a table, only the items).
type TerraformTablesFile struct {
	GeneratedBy  string                    `json:"generated_by"`
	GSIShardsOff map[string]TerraformTable `json:"gsi_shards_off"`
	GSIShardsOn  map[string]TerraformTable `json:"gsi_shards_on"`
}

// TerraformTable is one table of TerraformTablesFile, keyed by its
// logical name, in the shape of the aws_dynamodb_table resource: null
// where the resource leaves an argument unset.
type TerraformTable struct {
	Doc      string  `json:"doc"`
	HashKey  string  `json:"hash_key"`
	RangeKey *string `json:"range_key"`
	// Attributes are the key attributes of the table and its indexes,
	// sorted by name (as CreateTableInput declares them).
	Attributes []TerraformAttribute `json:"attributes"`
	Indexes    []TerraformIndex     `json:"global_secondary_indexes"`
	// TTLAttribute is null when items never expire.
	TTLAttribute *string `json:"ttl_attribute"`
	// StreamViewType is null when streams are off.
	StreamViewType *string `json:"stream_view_type"`
	// PointInTimeRecovery: on in stage and prod when true (always off in
	// dev; Terraform decides by stage).
	PointInTimeRecovery bool `json:"point_in_time_recovery"`
	// Projection reports whether a domain's folds write the table
	// (ProjectionTables): the projector writes it and the API reads it.
	Projection bool `json:"projection"`
}

// TerraformAttribute is an attribute definition.
type TerraformAttribute struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// TerraformIndex is a global secondary index: its key_schema lists the
// HASH attributes, then the RANGE ones, in order (multi-attribute keys).
type TerraformIndex struct {
	Name           string               `json:"name"`
	ProjectionType string               `json:"projection_type"`
	KeySchema      []TerraformKeySchema `json:"key_schema"`
}

// TerraformKeySchema is one key_schema element.
type TerraformKeySchema struct {
	AttributeName string `json:"attribute_name"`
	KeyType       string `json:"key_type"` // HASH or RANGE
}

// TerraformTablesGenerator is the command that writes the file.
const TerraformTablesGenerator = "go test ./schema -run TestTerraformTablesJSON -update"

// TerraformTablesJSON renders TerraformTablesFile as the generator writes
// it: indented, with a final newline.
func TerraformTablesJSON() ([]byte, error) {
	f := TerraformTablesFile{
		GeneratedBy:  TerraformTablesGenerator + " (schema.TablesFor; do not edit)",
		GSIShardsOff: terraformTables(TablesFor(0)),
		GSIShardsOn:  terraformTables(TablesFor(2)),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func terraformTables(specs []Table) map[string]TerraformTable {
	projection := map[string]bool{}
	for _, l := range ProjectionTables() {
		projection[l] = true
	}
	out := make(map[string]TerraformTable, len(specs))
	for _, t := range specs {
		// CreateTableInput is the one place that collects the attribute
		// definitions and key schemas; Terraform gets the same.
		in := t.CreateTableInput(t.Logical)
		tt := TerraformTable{
			Doc:                 t.Doc,
			HashKey:             t.Hash.Name,
			Attributes:          []TerraformAttribute{},
			Indexes:             []TerraformIndex{},
			PointInTimeRecovery: t.PITR,
			Projection:          projection[t.Logical],
		}
		if t.Range != nil {
			tt.RangeKey = &t.Range.Name
		}
		for _, a := range in.AttributeDefinitions {
			tt.Attributes = append(tt.Attributes, TerraformAttribute{Name: *a.AttributeName, Type: string(a.AttributeType)})
		}
		for _, ix := range in.GlobalSecondaryIndexes {
			ti := TerraformIndex{Name: *ix.IndexName, ProjectionType: string(ix.Projection.ProjectionType)}
			for _, k := range ix.KeySchema {
				ti.KeySchema = append(ti.KeySchema, TerraformKeySchema{AttributeName: *k.AttributeName, KeyType: string(k.KeyType)})
			}
			tt.Indexes = append(tt.Indexes, ti)
		}
		if t.TTLAttribute != "" {
			a := t.TTLAttribute
			tt.TTLAttribute = &a
		}
		if t.StreamView != "" {
			v := string(t.StreamView)
			tt.StreamViewType = &v
		}
		out[t.Logical] = tt
	}
	return out
}
