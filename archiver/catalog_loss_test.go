package archiver_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// dropFromCatalog deletes tables (and, with dropNamespace, then their
// namespace) from a sqlite: catalog, as a person deleting the Glue tables
// or database would: the catalog's entries go, the files in S3 stay.
func dropFromCatalog(t testing.TB, uri, namespace string, tables []string, dropNamespace bool) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open(sqliteshim.ShimName, "file:"+strings.TrimPrefix(uri, "sqlite:")+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := sqlcat.NewCatalog("streamfold", db, sqlcat.SQLite, iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if err := cat.DropTable(ctx, table.Identifier{namespace, tb}); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			t.Fatalf("drop table %s: %v", tb, err)
		}
	}
	if dropNamespace {
		if err := cat.DropNamespace(ctx, table.Identifier{namespace}); err != nil {
			t.Fatalf("drop namespace %s: %v", namespace, err)
		}
	}
}

// tableNames lists every archive table.
func tableNames() []string {
	var out []string
	for _, tb := range archiver.Tables() {
		out = append(out, tb.Name)
	}
	return out
}

// testCatalogLoss archives a first phase of events (written 30 days ago
// where the S3 can say so: backdate), loses the catalog's entries (the
// tables, or the tables and their namespace), archives the second phase
// through the archive that was running (it had loaded the tables before)
// and through a new one, runs maintenance (snapshot expiry and orphan-file
// removal, with the defaults and expiring all but the newest snapshot);
// every event of both phases is still read, exactly once.
func testCatalogLoss(t *testing.T, api archiver.S3API, bucket, prefix string, backdate func(on bool), dropNamespace bool) {
	ctx := context.Background()
	cfg := archiver.Config{Bucket: bucket, Prefix: prefix}
	a := newArchive(t, api, cfg)
	recs := simRecords(t, 41, 600, 2)
	first, second := recs[:len(recs)/2], recs[len(recs)/2:]
	backdate(true)
	writeSmall(t, a, first, 40)
	backdate(false)
	exactlyOnce(t, a, first)

	uri, ns := a.Catalog()
	dropFromCatalog(t, uri, ns, tableNames(), dropNamespace)
	// A reader never creates or registers: it says what is wrong.
	if err := a.Scan(ctx, func(archiver.Record) error { return nil }); !errors.Is(err, archiver.ErrUnregisteredTable) || !strings.Contains(err.Error(), "streamfold archive register") {
		t.Fatalf("reading with the tables gone from the catalog: %v, want ErrUnregisteredTable naming the remedy", err)
	}

	// The running archiver's next batch, then a new process's.
	half := len(second) / 2
	writeSmall(t, a, second[:half], 40)
	b := newArchive(t, api, cfg)
	writeSmall(t, b, second[half:], 40)
	exactlyOnce(t, b, recs)

	for _, opts := range []archiver.MaintainOptions{{}, {SnapshotAge: time.Nanosecond, RetainSnapshots: 1}, {}} {
		for _, tb := range tableNames() {
			st, err := b.Maintain(ctx, tb, opts)
			if err != nil {
				t.Fatalf("maintain %s %+v: %v", tb, opts, err)
			}
			t.Logf("maintain %s %+v: %+v", tb, opts, st)
		}
	}
	exactlyOnce(t, newArchive(t, api, cfg), recs)
	for _, tb := range tableNames() {
		r, err := b.Register(ctx, tb, archiver.RegisterOptions{})
		if err != nil || r.Action != "present" {
			t.Fatalf("register %s after recovery: %+v %v", tb, r, err)
		}
	}
}

// memBackdate makes an s3mem's writes 30 days old while on: older than
// every maintenance age, so orphan removal would take them.
func memBackdate(mem *s3mem.S3) func(bool) {
	return func(on bool) {
		if on {
			mem.SetClock(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
		} else {
			mem.SetClock(time.Now)
		}
	}
}

// TestCatalogLossKeepsHistory: losing a table's catalog entry, or its
// namespace (the Glue database), loses no event, neither at the next batch
// (which registers the table's metadata instead of creating an empty table)
// nor at maintenance (whose orphan removal would otherwise delete the whole
// older history). On s3mem (files 30 days old) and MinIO with the SQLite
// catalog.
func TestCatalogLossKeepsHistory(t *testing.T) {
	for _, dropNamespace := range []bool{false, true} {
		name, prefix := "table dropped", "lost-table"
		if dropNamespace {
			name, prefix = "namespace dropped", "lost-namespace"
		}
		t.Run(name+"/s3mem", func(t *testing.T) {
			mem := s3mem.New("bkt")
			testCatalogLoss(t, mem, "bkt", prefix, memBackdate(mem), dropNamespace)
		})
		t.Run(name+"/minio", func(t *testing.T) {
			c, bucket := newBucket(t)
			testCatalogLoss(t, c.S3, bucket, prefix, func(bool) {}, dropNamespace)
		})
	}
}

// copyKeys copies objects to another prefix (from -> to), keeping their
// modification time's age through mem's clock, and deletes the originals
// when move is set.
func copyKeys(t testing.TB, mem *s3mem.S3, keys []string, from, to string, move bool) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, k := range keys {
		o, err := mem.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k)})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(o.Body)
		o.Body.Close()
		nk := to + strings.TrimPrefix(k, from)
		if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(nk), Body: strings.NewReader(string(body))}); err != nil {
			t.Fatal(err)
		}
		if move {
			if _, err := mem.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k)}); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, nk)
	}
	return out
}

func metadataJSON(mem *s3mem.S3, prefix, table string) []string {
	var out []string
	for _, k := range mem.Keys("bkt", prefix+"/"+table+"/metadata/") {
		if strings.HasSuffix(k, ".metadata.json") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestMaintainRefusesShortHistory: maintenance refuses, deleting nothing, a
// table whose catalog entry is not the whole history at its location: a
// new table created over a history the catalog had lost (what the archiver
// did before it registered lost tables), a lost history whose data files
// would all be orphans, and a catalog entry pointing at an old version. The
// error names the table, the location and the counts.
func TestMaintainRefusesShortHistory(t *testing.T) {
	ctx := context.Background()
	const tb = archiver.TableMessages
	setup := func(t *testing.T, prefix string) (*s3mem.S3, archiver.Config, *archiver.Archive, []archiver.Record, []archiver.Record) {
		mem := s3mem.New("bkt")
		cfg := archiver.Config{Bucket: "bkt", Prefix: prefix}
		a := newArchive(t, mem, cfg)
		recs, _ := dayOf(simRecords(t, 43, 900, 1), tb)
		first, second := recs[:len(recs)-20], recs[len(recs)-20:]
		backdate := memBackdate(mem)
		backdate(true)
		writeSmall(t, a, first, 20)
		backdate(false)
		return mem, cfg, a, first, second
	}
	refused := func(t *testing.T, mem *s3mem.S3, a *archiver.Archive, prefix string, check func(*archiver.HistoryError) bool) {
		t.Helper()
		before := mem.Keys("bkt", prefix+"/")
		for _, opts := range []archiver.MaintainOptions{{}, {DryRun: true}, {SnapshotAge: time.Nanosecond, RetainSnapshots: 1}} {
			_, err := a.Maintain(ctx, tb, opts)
			var he *archiver.HistoryError
			if !errors.Is(err, archiver.ErrShortHistory) || !errors.As(err, &he) || !check(he) {
				t.Fatalf("maintain %+v: %v, want a HistoryError", opts, err)
			}
			for _, part := range []string{"table messages", "s3://bkt/" + prefix + "/messages", "nothing was changed"} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("the refusal does not name %q: %v", part, err)
				}
			}
		}
		if after := mem.Keys("bkt", prefix+"/"); !slices.Equal(before, after) {
			t.Fatalf("a refused maintenance changed the files: %d before, %d after", len(before), len(after))
		}
	}

	t.Run("a new table over a lost history", func(t *testing.T) {
		const prefix = "over"
		mem, cfg, a, first, second := setup(t, prefix)
		uri, ns := a.Catalog()
		dropFromCatalog(t, uri, ns, []string{tb}, false)
		// Hide the history while a writer looks (as the old archiver did
		// not look): it creates an empty table at the same location.
		old := metadataJSON(mem, prefix, tb)
		memBackdate(mem)(true)
		hidden := copyKeys(t, mem, old, prefix+"/", "hidden/", true)
		memBackdate(mem)(false)
		b := newArchive(t, mem, cfg)
		writeSmall(t, b, second, 20)
		memBackdate(mem)(true)
		copyKeys(t, mem, hidden, "hidden/", prefix+"/", true)
		memBackdate(mem)(false)
		refused(t, mem, b, prefix, func(he *archiver.HistoryError) bool { return he.Foreign == len(old)-1 && he.Table == tb }) // the first has no snapshot
		_ = first
	})

	t.Run("a lost history whose files would all be orphans", func(t *testing.T) {
		const prefix = "gone"
		mem, cfg, a, _, second := setup(t, prefix)
		uri, ns := a.Catalog()
		dropFromCatalog(t, uri, ns, []string{tb}, false)
		for _, k := range mem.Keys("bkt", prefix+"/"+tb+"/metadata/") {
			mem.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String(k)})
		}
		b := newArchive(t, mem, cfg)
		writeSmall(t, b, second, 20)
		refused(t, mem, b, prefix, func(he *archiver.HistoryError) bool {
			return he.OrphanDataFiles > 1 && he.LiveDataFiles == 1
		})
	})

	t.Run("a catalog entry behind its location", func(t *testing.T) {
		const prefix = "behind"
		mem, cfg, a, first, _ := setup(t, prefix)
		uri, ns := a.Catalog()
		dropFromCatalog(t, uri, ns, []string{tb}, false)
		meta := metadataJSON(mem, prefix, tb)
		newest := meta[len(meta)-3:]
		memBackdate(mem)(true)
		hidden := copyKeys(t, mem, newest, prefix+"/", "hidden/", true)
		b := newArchive(t, mem, cfg)
		r, err := b.Register(ctx, tb, archiver.RegisterOptions{})
		if err != nil || r.Action != "registered" {
			t.Fatalf("register: %+v %v", r, err)
		}
		copyKeys(t, mem, hidden, "hidden/", prefix+"/", true)
		memBackdate(mem)(false)
		refused(t, mem, b, prefix, func(he *archiver.HistoryError) bool { return he.Newer == 3 })
		r, err = b.Register(ctx, tb, archiver.RegisterOptions{})
		if err != nil || r.Action != "behind" || r.Previous == "" {
			t.Fatalf("register without --replace: %+v %v", r, err)
		}
		r, err = b.Register(ctx, tb, archiver.RegisterOptions{Replace: true})
		if err != nil || r.Action != "replaced" || !strings.HasSuffix(r.Metadata, newest[2][strings.LastIndexByte(newest[2], '/'):]) {
			t.Fatalf("register --replace: %+v %v, want %s", r, err, newest[2])
		}
		if _, err := b.Maintain(ctx, tb, archiver.MaintainOptions{}); err != nil {
			t.Fatalf("maintain after --replace: %v", err)
		}
		exactlyOnce(t, b, first)
	})
}
