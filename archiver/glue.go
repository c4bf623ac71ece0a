package archiver

import (
	"bytes"
	"encoding/json"
)

// Hive formats of the Glue tables. A table's LOCATION is its manifest
// directory (ManifestDir), read through SymlinkTextInputFormat: every line
// of every manifest is a Parquet object, read by the Parquet SerDe.
const (
	GlueInputFormat  = "org.apache.hadoop.hive.ql.io.SymlinkTextInputFormat"
	GlueOutputFormat = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
	GlueSerde        = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
)

// GlueColumn is a column as the Glue definitions list it.
type GlueColumn struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Comment string `json:"comment,omitempty"`
}

// GlueTable is one table of the Glue definitions.
type GlueTable struct {
	Doc     string       `json:"doc"`
	Columns []GlueColumn `json:"columns"`
}

// GlueStorage says how Athena reads the tables, for Terraform: the table
// location is s3://BUCKET/PREFIX/<LocationDir><table>/ and partition
// event_date=D is the directory <location>event_date=D/ (partition
// projection: storage.location.template =
// <location>event_date=${event_date}/).
type GlueStorage struct {
	InputFormat  string `json:"input_format"`
	OutputFormat string `json:"output_format"`
	Serde        string `json:"serialization_library"`
	LocationDir  string `json:"location_dir"` // under the archive prefix: "_symlink/"
	DataDir      string `json:"data_dir"`     // where the Parquet objects are: "" (directly under the prefix)
	DateFormat   string `json:"date_format"`  // of event_date, for projection.event_date.format
}

// GlueSchema is the document Terraform reads (jsondecode) to declare the
// Glue catalog tables: terraform/generated/glue_tables.json.
type GlueSchema struct {
	Tables        map[string]GlueTable `json:"tables"`
	PartitionKeys []GlueColumn         `json:"partition_keys"`
	Storage       GlueStorage          `json:"storage"`
}

// Glue returns the Glue definitions of Tables(): the same columns, in the
// same order, as the Parquet files.
func Glue() GlueSchema {
	g := GlueSchema{
		Tables:        map[string]GlueTable{},
		PartitionKeys: []GlueColumn{{Name: PartitionKey, Type: TypeString, Comment: "the event's UTC date, YYYY-MM-DD"}},
		Storage: GlueStorage{
			InputFormat: GlueInputFormat, OutputFormat: GlueOutputFormat, Serde: GlueSerde,
			LocationDir: symlinkDir + "/", DataDir: "", DateFormat: "yyyy-MM-dd",
		},
	}
	for _, t := range Tables() {
		gt := GlueTable{Doc: t.Doc}
		for _, c := range t.Columns {
			gt.Columns = append(gt.Columns, GlueColumn(c))
		}
		g.Tables[t.Name] = gt
	}
	return g
}

// GlueJSON renders Glue() as indented JSON with a final newline (map keys
// sorted, so the output is stable).
func GlueJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Glue()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
