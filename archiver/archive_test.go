package archiver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/schema"
)

// scanAll reads the whole archive through the manifests.
func scanAll(t testing.TB, a *archiver.Archive) []archiver.Record {
	t.Helper()
	var out []archiver.Record
	if err := a.Scan(context.Background(), func(r archiver.Record) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

// exactlyOnce checks that the archive holds want, each record once.
func exactlyOnce(t testing.TB, a *archiver.Archive, want []archiver.Record) {
	t.Helper()
	got := scanAll(t, a)
	seen := map[string]int{}
	for _, r := range got {
		seen[r.Event.Subject+"\x00"+r.Event.ID]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Fatalf("event %q is archived %d times", k, n)
		}
	}
	if err := sameRecords(want, got); err != nil {
		t.Fatalf("archive: %v", err)
	}
}

// batches cuts records into consecutive batches of n, like a stream shard.
func batches(recs []archiver.Record, n int) [][]archiver.Record {
	var out [][]archiver.Record
	for i := 0; i < len(recs); i += n {
		out = append(out, recs[i:min(i+n, len(recs))])
	}
	return out
}

func memArchive(t testing.TB) (*s3mem.S3, *archiver.Archive) {
	mem := s3mem.New("bkt")
	return mem, newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive"})
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  archiver.Config
		want string
	}{
		{archiver.Config{}, "Config.Bucket: is required"},
		{archiver.Config{Bucket: "Bad_Bucket"}, "Config.Bucket: must be"},
		{archiver.Config{Bucket: "bkt", Prefix: "/a"}, "Config.Prefix: must not start or end with '/'"},
		{archiver.Config{Bucket: "bkt", Prefix: "a//b"}, "Config.Prefix: must not contain empty path segments"},
		{archiver.Config{Bucket: "bkt", Concurrency: -1}, "Config.Concurrency: must not be negative"},
		{archiver.Config{Bucket: "bkt", Catalog: "sqlite:/tmp/c.db", Compression: "lzo"}, "EncodeOptions.Compression: must be one of"},
		{archiver.Config{Bucket: "bkt", Prefix: "a/b"}, "Config.Catalog: is required"},
		{archiver.Config{Bucket: "bkt", Catalog: "hive:x"}, "this build opens glue and sqlite catalogs"},
		{archiver.Config{Bucket: "bkt", Catalog: "sqlite:"}, "sqlite needs a file path"},
		{archiver.Config{Bucket: "bkt", Catalog: "glue", Namespace: "a.b"}, "Config.Namespace"},
		{archiver.Config{Bucket: "bkt", Prefix: "a/b", Catalog: "sqlite:/tmp/c.db"}, ""},
		{archiver.Config{Bucket: "bkt", Catalog: "glue:123456789012", Namespace: "streamfold_prod_archive"}, ""},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	if _, err := archiver.New(nil, archiver.Config{Bucket: "bkt"}); err == nil {
		t.Error("New accepted a nil client")
	}
}

func TestWriteBatchLayout(t *testing.T) {
	mem, a := memArchive(t)
	recs := simRecords(t, 1, 300, 2)
	st, err := a.WriteBatch(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Records != len(recs) || st.Objects < 8 || st.Bytes == 0 {
		t.Fatalf("stats %+v: want every record, one object per table and date (4 tables x 2 days)", st)
	}
	exactlyOnce(t, a, recs)
	// One file per (table, date), named after its lowest and highest
	// sequence numbers and its lowest record's eventID.
	lowest, highest, firstID := map[string]string{}, map[string]string{}, map[string]string{}
	less := func(a, b string) bool { return len(a) < len(b) || (len(a) == len(b) && a < b) }
	for _, r := range recs {
		tb, _ := archiver.TableFor(r.Event.Type)
		k := "archive/" + tb + "/data/event_date=" + archiver.EventDate(r.Event.Time) + "/"
		if s, ok := lowest[k]; !ok || less(r.Seq, s) {
			lowest[k], firstID[k] = r.Seq, r.StreamEventID
		}
		if s, ok := highest[k]; !ok || less(s, r.Seq) {
			highest[k] = r.Seq
		}
	}
	pad := func(s string) string { return strings.Repeat("0", 40-len(s)) + s }
	var want []string
	for dir, seq := range lowest {
		sum := sha256.Sum256([]byte("eventID\x00" + firstID[dir]))
		want = append(want, dir+pad(seq)+"-"+pad(highest[dir])+"-"+hex.EncodeToString(sum[:16])+".parquet")
	}
	slices.Sort(want)
	var data []string
	for _, k := range mem.Keys("bkt", "archive/") {
		if strings.HasSuffix(k, ".parquet") {
			data = append(data, k)
		}
	}
	if !slices.Equal(data, want) {
		t.Fatalf("data objects:\n%v\nwant\n%v", data, want)
	}
	for _, tb := range archiver.Tables() {
		dates, err := a.Partitions(context.Background(), tb.Name)
		if err != nil || len(dates) == 0 {
			t.Fatalf("%s: partitions %v, %v", tb.Name, dates, err)
		}
		for _, d := range dates {
			keys, err := a.Objects(context.Background(), tb.Name, d)
			if err != nil || len(keys) != 1 {
				t.Fatalf("%s %s: objects %v, %v", tb.Name, d, keys, err)
			}
		}
	}
	if _, err := a.Objects(context.Background(), "nope", "2026-01-05"); !errors.Is(err, archiver.ErrUnknownTable) {
		t.Errorf("Objects of an unknown table: %v", err)
	}
	if keys, err := a.Objects(context.Background(), archiver.TableMessages, "1999-01-01"); err != nil || len(keys) != 0 {
		t.Errorf("Objects of an empty partition: %v, %v", keys, err)
	}
}

func TestWriteBatchRejects(t *testing.T) {
	_, a := memArchive(t)
	recs := simRecords(t, 1, 5, 1)
	bad := slices.Clone(recs)
	bad[2].Seq = "12x"
	if _, err := a.WriteBatch(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "must be 1-40 decimal digits") {
		t.Errorf("bad sequence number: %v", err)
	}
	bad = slices.Clone(recs)
	bad[1].Event.Type = "no.such.type"
	if _, err := a.WriteBatch(context.Background(), bad); !errors.Is(err, archiver.ErrUnknownTable) {
		t.Errorf("unknown type: %v", err)
	}
	if st, err := a.WriteBatch(context.Background(), nil); err != nil || st.Objects != 0 {
		t.Errorf("empty batch: %+v, %v", st, err)
	}
}

// TestRetriesWriteEachRecordOnce replays, on a random schedule, what the
// event source mapping (or streamrun) does to a shard: deliveries start
// where the last checkpoint left off, and a delivery whose outcome is not
// checkpointed (it failed, or the checkpoint was lost) is followed by one
// from the same record, of the same size or not. A failed batch is
// retried whole or bisected.
func TestRetriesWriteEachRecordOnce(t *testing.T) {
	ctx := context.Background()
	recs := simRecords(t, 2, 1500, 2)
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt", Concurrency: 2})
	r := rand.New(rand.NewPCG(1, 2))
	deliver := func(from, n int) {
		t.Helper()
		if _, err := a.WriteBatch(ctx, recs[from:min(from+n, len(recs))]); err != nil {
			t.Fatalf("batch at %d: %v", from, err)
		}
	}
	failing := func(from, n int) {
		t.Helper()
		if _, err := a.WriteBatch(ctx, recs[from:min(from+n, len(recs))]); !errors.Is(err, errInjected) {
			t.Fatalf("batch at %d: %v, want the injected failure", from, err)
		}
		f.heal()
	}
	counts := map[string]int{}
	for pos := 0; pos < len(recs); {
		n := 20 + r.IntN(150)
		switch scenario := r.IntN(5); scenario {
		case 0:
			counts["ok"]++
			deliver(pos, n)
		case 1: // fails after some objects, retried whole
			counts["crash, retry"]++
			f.crashAfter(r.IntN(6))
			failing(pos, n)
			deliver(pos, n)
		case 2: // data files written and some tables committed, then bisected
			counts["bisect"]++
			f.setFail(func(op, key string) bool {
				return strings.Contains(key, "messages/metadata/")
			})
			failing(pos, n)
			h := 1 + r.IntN(n-1)
			deliver(pos, h)
			deliver(pos+h, n-h)
		case 3, 4: // succeeded, checkpoint lost: delivered again from the same record, bigger or smaller
			counts["redelivered"]++
			deliver(pos, n)
			n = 20 + r.IntN(150)
			deliver(pos, n)
		}
		pos += n
	}
	t.Logf("deliveries: %v", counts)
	exactlyOnce(t, a, recs)
}

// TestConcurrentCommitters writes many batches (as from many shards) into
// the same partitions at once: the optimistic Iceberg commits, reloaded and
// retried on conflict, must not lose a file.
func TestConcurrentCommitters(t *testing.T) {
	_, a := memArchive(t)
	recs := simRecords(t, 4, 800, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, b := range batches(recs, 25) {
		wg.Add(1)
		go func(b []archiver.Record) {
			defer wg.Done()
			if _, err := a.WriteBatch(context.Background(), b); err != nil {
				errs <- err
			}
		}(b)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	exactlyOnce(t, a, recs)
}

func TestOrphans(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt"})
	recs := byTable(simRecords(t, 5, 300, 1))[archiver.TableMessages]
	// The table exists; the commit fails writing its manifest.
	f.setFail(func(op, key string) bool {
		return strings.Contains(key, "/metadata/") && strings.HasSuffix(key, ".avro")
	})
	if _, err := a.WriteBatch(ctx, recs); err == nil {
		t.Fatal("commit failure not reported")
	}
	date := archiver.EventDate(recs[0].Event.Time)
	orphans, err := a.Orphans(ctx, archiver.TableMessages, date)
	if err != nil || len(orphans) != 1 {
		t.Fatalf("orphans %v, %v: want the unlisted object", orphans, err)
	}
	if got := scanAll(t, a); len(got) != 0 {
		t.Fatalf("an unlisted object is visible: %d records", len(got))
	}
	f.heal()
	if _, err := a.WriteBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if orphans, _ := a.Orphans(ctx, archiver.TableMessages, date); len(orphans) != 0 {
		t.Fatalf("the retry left orphans: %v", orphans)
	}
	exactlyOnce(t, a, recs)
}

func TestEventsAndScanStop(t *testing.T) {
	_, a := memArchive(t)
	recs := simRecords(t, 6, 200, 1)
	if _, err := a.WriteBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := a.Events(context.Background(), func(e schema.Event) error { n++; return nil }); err != nil || n != len(recs) {
		t.Fatalf("Events: %d events, %v; want %d", n, err, len(recs))
	}
	stop := fmt.Errorf("stop")
	n = 0
	err := a.Scan(context.Background(), func(archiver.Record) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("Scan did not stop at fn's error: %v after %d", err, n)
	}
}

// TestNamespaceOfAnotherArchive: a catalog namespace whose tables belong to
// another archive (bucket or prefix) is refused, never written through.
func TestNamespaceOfAnotherArchive(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	cat := "sqlite:" + t.TempDir() + "/c.db"
	a := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "one", Catalog: cat})
	recs := simRecords(t, 3, 50, 1)
	if _, err := a.WriteBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	b := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "two", Catalog: cat})
	if _, err := b.WriteBatch(ctx, recs); !errors.Is(err, archiver.ErrSchemaMismatch) || !strings.Contains(err.Error(), "another archive uses this namespace") {
		t.Fatalf("writing through another archive's tables: %v", err)
	}
	c := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "two", Catalog: cat, Namespace: "other"})
	if _, err := c.WriteBatch(ctx, recs); err != nil {
		t.Fatalf("own namespace: %v", err)
	}
}

// TestReadersCreateNothing: reading an archive nothing was written to
// (ls, scan, compact, maintain) finds it empty and creates no table: a
// reader needs no write access to the catalog.
func TestReadersCreateNothing(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	a := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "empty"})
	if dates, err := a.Partitions(ctx, archiver.TableMessages); err != nil || len(dates) != 0 {
		t.Fatalf("partitions of an empty archive: %v %v", dates, err)
	}
	if got := scanAll(t, a); len(got) != 0 {
		t.Fatalf("scan: %d records", len(got))
	}
	if st, err := a.Compact(ctx, archiver.TableMessages, "2026-01-05", all); err != nil || st.Inputs != 0 {
		t.Fatalf("compact: %+v %v", st, err)
	}
	if st, err := a.Maintain(ctx, archiver.TableMessages, archiver.MaintainOptions{}); err != nil || st.SnapshotsBefore != 0 {
		t.Fatalf("maintain: %+v %v", st, err)
	}
	if keys := mem.Keys("bkt", "empty/"); len(keys) != 0 {
		t.Fatalf("reading wrote %v", keys)
	}
}
