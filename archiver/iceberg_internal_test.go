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
