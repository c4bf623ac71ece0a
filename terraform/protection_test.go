package terraform

import (
	"strings"
	"testing"
)

// preventsDestroy reports whether a resource block has lifecycle {
// prevent_destroy = true } (a literal: Terraform allows nothing else there).
func preventsDestroy(b *tfBlock) bool {
	for _, nb := range b.Block.Body.Blocks {
		if nb.Type != "lifecycle" {
			continue
		}
		a, ok := nb.Body.Attributes["prevent_destroy"]
		if !ok {
			return false
		}
		v, diags := a.Expr.Value(nil)
		return !diags.HasErrors() && v.True()
	}
	return false
}

// TestArchiveCatalogProtected: the Glue database that holds the archive's
// Iceberg tables is never destroyed by Terraform (prevent_destroy), and the
// archiver's role may delete neither it nor its tables (no glue:Delete*
// action in any policy of this configuration). Losing them loses no
// history (the archiver re-registers a table from its metadata in S3), but
// Athena sees nothing until then.
func TestArchiveCatalogProtected(t *testing.T) {
	cfg, ev := loadEvaluated(t, evalOptions{})
	db := cfg.block("resource", "aws_glue_catalog_database", "archive")
	if db == nil {
		t.Fatal("no aws_glue_catalog_database.archive")
	}
	if !preventsDestroy(db) {
		t.Errorf("%s: lifecycle { prevent_destroy = true } is missing: a destroy (or a renamed stage) would delete the archive's catalog", db.Addr())
	}
	for _, inst := range ev.instancesOf("data", "aws_iam_policy_document") {
		for _, st := range blocks(inst.Obj, "statement") {
			actions, _ := stringList(attr(st, "actions"))
			for _, a := range actions {
				if getStr(st, "effect") != "Deny" && (strings.HasPrefix(a, "glue:Delete") || strings.HasPrefix(a, "glue:BatchDelete") || a == "glue:*") {
					t.Errorf("%s grants %s: the archive's catalog must not be deletable by the functions", inst.Addr, a)
				}
			}
		}
	}
}
