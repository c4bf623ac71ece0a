package archiver_test

import (
	"context"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/s3fs"
)

// fsStore is a local filesystem warehouse with one bucket, "bkt".
func fsStore(t *testing.T) *s3fs.S3 {
	t.Helper()
	s, err := s3fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestArchiveOnFilesystem: the archive on a local filesystem warehouse (the
// demo's default, `dev up --archive fs`) writes every record exactly once,
// and a second archive on the same directory and catalog reads them back.
func TestArchiveOnFilesystem(t *testing.T) {
	store := fsStore(t)
	cfg := archiver.Config{Bucket: "bkt", Prefix: "archive"}
	cfg.Catalog = testCatalog(t, cfg.Bucket, cfg.Prefix)
	a := newArchive(t, store, cfg)
	recs := simRecords(t, 3, 400, 2)
	for _, b := range batches(recs, 150) {
		if _, err := a.WriteBatch(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	exactlyOnce(t, a, recs)
	again, err := s3fs.New(store.Root())
	if err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, newArchive(t, again, cfg), recs)
}

// TestCompactCrashSafetyFS is TestCompactCrashSafetyMem on the filesystem
// warehouse.
func TestCompactCrashSafetyFS(t *testing.T) {
	recs, date := dayOf(simRecords(t, 8, 600, 1), archiver.TableGitHubJobs)
	testCompactCrashes(t, fsStore(t), "bkt", recs, archiver.TableGitHubJobs, date, len(recs)/10+1)
}
