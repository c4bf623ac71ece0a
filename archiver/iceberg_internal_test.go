package archiver

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// noCreateDatabase is a catalog whose caller may not create namespaces,
// like the archiver's role in Glue (no glue:CreateDatabase).
type noCreateDatabase struct{ catalog.Catalog }

func (noCreateDatabase) CreateNamespace(context.Context, table.Identifier, iceberg.Properties) error {
	return errors.New("AccessDeniedException: not authorized to perform glue:CreateDatabase")
}

// TestTablesInAnExistingNamespace: the archive creates its tables in a
// namespace that exists (the Glue database Terraform made) without trying
// to create the namespace.
func TestTablesInAnExistingNamespace(t *testing.T) {
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sqlite:"+t.TempDir()+"/c.db", registerS3(s3mem.New("bkt"), ""))
	if err != nil {
		t.Fatal(err)
	}
	ns := table.Identifier{"streamfold_prod_archive"}
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
		t.Fatal(err)
	}
	k := &lake{cat: noCreateDatabase{cat}, namespace: ns, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	if _, err := k.load(ctx, TableMessages); err != nil {
		t.Fatalf("create a table in an existing namespace: %v", err)
	}
	missing := &lake{cat: noCreateDatabase{cat}, namespace: table.Identifier{"absent"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	if _, err := missing.load(ctx, TableMessages); err == nil {
		t.Fatal("a missing namespace that may not be created: no error")
	}
}

// TestSchemaEvolution: a table created by an older archiver, without the
// newest column, gets it added (optional, with its own field id) the first
// time a newer archiver uses the table; a table whose column has another
// type is refused, not changed.
func TestSchemaEvolution(t *testing.T) {
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sqlite:"+t.TempDir()+"/c.db", registerS3(s3mem.New("bkt"), ""))
	if err != nil {
		t.Fatal(err)
	}
	k := &lake{cat: cat, namespace: table.Identifier{"ns"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	full, err := IcebergSchema(TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	fields := full.Fields()
	last := fields[len(fields)-1]
	old := iceberg.NewSchema(0, fields[:len(fields)-1]...)
	if _, err := k.create(ctx, TableMessages, old); err != nil {
		t.Fatal(err)
	}
	tbl, err := k.load(ctx, TableMessages)
	if err != nil {
		t.Fatalf("evolve: %v", err)
	}
	got, ok := tbl.Schema().FindFieldByName(last.Name)
	if !ok || got.ID != last.ID || got.Required || !got.Type.Equals(last.Type) {
		t.Fatalf("added column %+v, want %+v, optional", got, last)
	}

	// Another table, whose column changed type: refused.
	changed := make([]iceberg.NestedField, len(fields))
	copy(changed, fields)
	for i, f := range changed {
		if f.Name == "stage" {
			changed[i].Type = iceberg.PrimitiveTypes.Int64
		}
	}
	k2 := &lake{cat: cat, namespace: table.Identifier{"ns2"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	if _, err := k2.create(ctx, TableMessages, iceberg.NewSchema(0, changed...)); err != nil {
		t.Fatal(err)
	}
	k2.ensured = map[string]bool{}
	if _, err := k2.load(ctx, TableMessages); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("a column of another type: %v, want ErrSchemaMismatch", err)
	}
}

// TestTablePropertiesCaughtUp: a table created before a property was added
// to tableProps (manifest merging, say) gets it the next time an archiver
// uses the table.
func TestTablePropertiesCaughtUp(t *testing.T) {
	ctx := context.Background()
	cat, err := openCatalog(ctx, "sqlite:"+t.TempDir()+"/c.db", registerS3(s3mem.New("bkt"), ""))
	if err != nil {
		t.Fatal(err)
	}
	k := &lake{cat: cat, namespace: table.Identifier{"ns"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	tbl, err := k.load(ctx, TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.RemoveProperties([]string{"commit.manifest-merge.enabled"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	k2 := &lake{cat: cat, namespace: table.Identifier{"ns"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	tbl, err = k2.load(ctx, TableMessages)
	if err != nil || tbl.Properties()["commit.manifest-merge.enabled"] != "true" {
		t.Fatalf("properties after load: %v %v", tbl.Properties(), err)
	}
}
