package main

import "testing"

// TestArchiveDirCatalog: with --archive-dir the default catalog is the
// warehouse's own, and the archive opens on the filesystem, not S3.
func TestArchiveDirCatalog(t *testing.T) {
	dir := t.TempDir()
	g := globals{ArchiveDir: dir, Prefix: "streamfold", Stage: "dev"}
	got, err := g.settings().CatalogURI()
	if err != nil || got != "sqlite:"+dir+"/catalog.db" {
		t.Fatalf("catalogURI = %q, %v; want sqlite:%s/catalog.db", got, err, dir)
	}
	n, err := g.naming()
	if err != nil {
		t.Fatal(err)
	}
	a, err := g.openArchive(nil, n, "")
	if err != nil {
		t.Fatalf("openArchive with --archive-dir and no S3 client: %v", err)
	}
	a.Close()
}
