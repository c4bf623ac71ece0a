package main

import (
	"os"
	"strings"
	"testing"
)

// TestDevArchiveMode: --archive wins; without it, what the state dir's last
// up recorded; without either, MinIO (what make test starts).
func TestDevArchiveMode(t *testing.T) {
	for _, tc := range []struct {
		name, recorded, flag, want, wantErr string
	}{
		{name: "nothing recorded", want: archiveMinIO},
		{name: "fs recorded", recorded: "fs\n", want: archiveFS},
		{name: "minio recorded", recorded: "minio\n", want: archiveMinIO},
		{name: "flag over record", recorded: "fs\n", flag: "minio", want: archiveMinIO},
		{name: "flag fs", flag: "fs", want: archiveFS},
		{name: "unknown flag", flag: "s3", wantErr: `--archive "s3": want minio or fs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.recorded != "" {
				if err := os.WriteFile(archiveModeFile(dir), []byte(tc.recorded), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := devArchiveMode(dir, tc.flag)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("devArchiveMode(%q) = %q, %v; want error %q", tc.flag, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("devArchiveMode(%q) = %q, %v; want %q", tc.flag, got, err, tc.want)
			}
		})
	}
}

// TestWriteArchiveModeRoundTrip: what up records, status and down read back.
func TestWriteArchiveModeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []string{archiveFS, archiveMinIO} {
		if err := writeArchiveMode(dir, mode); err != nil {
			t.Fatal(err)
		}
		if got, err := devArchiveMode(dir, ""); err != nil || got != mode {
			t.Fatalf("after recording %s: %q, %v", mode, got, err)
		}
	}
}

// TestArchiveDirCatalog: with --archive-dir the default catalog is the
// warehouse's own, and the archive opens on the filesystem, not S3.
func TestArchiveDirCatalog(t *testing.T) {
	dir := t.TempDir()
	g := globals{ArchiveDir: dir, Prefix: "streamfold", Stage: "dev"}
	got, err := g.catalogURI()
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
