package archiver_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// The fixture testdata/legacy_archive/ is an archive written by the code
// before Iceberg (commit 309899c), its objects stored under their keys
// (bucket legacy-bkt, prefix archive): 8 old partitions of 4 tables with
// their symlink manifests, batch objects of which some overlap (a batch
// redelivered from another record: duplicates that migration drops), one
// partition compacted (compact-*.parquet) and one orphan, an object of a
// failed batch that no manifest lists and whose events (ids orphan-*) are
// in no other object. How it was made: see testdata/legacy_archive/README.md.
const (
	fixtureDir    = "testdata/legacy_archive"
	fixtureBucket = "legacy-bkt"
	fixturePrefix = "archive"
)

// legacyFixture is what the fixture holds, as uploaded to one bucket and
// prefix.
type legacyFixture struct {
	listed     []archiver.Record            // records of the listed objects, each (subject, event id) once
	byTable    map[string][]archiver.Record // listed, per table
	orphans    []archiver.Record            // records of the unlisted objects
	orphanKeys []string                     // the unlisted objects
	oldKeys    []string                     // the listed objects and the manifests
	manifests  []string                     // the manifests
	partitions int
}

// uploadLegacy copies the fixture into bucket/prefix, its manifests
// rewritten to name that bucket and prefix.
func uploadLegacy(t testing.TB, api archiver.S3API, bucket, prefix string) legacyFixture {
	t.Helper()
	ctx := context.Background()
	fromURI := "s3://" + fixtureBucket + "/" + fixturePrefix + "/"
	toURI := "s3://" + bucket + "/" + prefix + "/"
	fix := legacyFixture{byTable: map[string][]archiver.Record{}}
	bodies := map[string][]byte{} // fixture key -> body
	listed := map[string]bool{}
	root := filepath.Join(fixtureDir, fixturePrefix)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		key := prefix + "/" + rel
		if strings.HasSuffix(rel, "/manifest") {
			for _, line := range strings.Fields(string(body)) {
				listed[strings.TrimPrefix(line, fromURI)] = true
			}
			body = []byte(strings.ReplaceAll(string(body), fromURI, toURI))
			fix.manifests = append(fix.manifests, key)
			fix.oldKeys = append(fix.oldKeys, key)
			fix.partitions++
		} else {
			bodies[rel] = body
		}
		_, err = api.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if fix.partitions == 0 {
		t.Fatalf("no fixture under %s", root)
	}
	seen := map[string]string{}
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range bodies {
			if !yield(k) {
				return
			}
		}
	}) {
		body := bodies[rel]
		recs, err := archiver.Decode(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("fixture %s: %v", rel, err)
		}
		if !listed[rel] {
			fix.orphans = append(fix.orphans, recs...)
			fix.orphanKeys = append(fix.orphanKeys, prefix+"/"+rel)
			continue
		}
		fix.oldKeys = append(fix.oldKeys, prefix+"/"+rel)
		for _, r := range recs {
			id := r.Event.Subject + "\x00" + r.Event.ID
			if k, ok := seen[id]; ok {
				if k != recordKey(r) {
					t.Fatalf("fixture: event %q differs between its copies", id)
				}
				continue
			}
			seen[id] = recordKey(r)
			fix.listed = append(fix.listed, r)
			tb, _ := archiver.TableFor(r.Event.Type)
			fix.byTable[tb] = append(fix.byTable[tb], r)
		}
	}
	for rel := range listed {
		if _, ok := bodies[rel]; !ok {
			t.Fatalf("fixture: a manifest lists %s, which is not in the fixture", rel)
		}
	}
	if len(fix.orphans) == 0 || len(fix.listed) == 0 {
		t.Fatalf("fixture: %d listed records, %d orphan records", len(fix.listed), len(fix.orphans))
	}
	return fix
}

func exists(t testing.TB, api archiver.S3API, bucket, key string) bool {
	t.Helper()
	keys := listKeys(t, api, bucket, key)
	return slices.Contains(keys, key)
}

// noneOf fails when the archive holds any of the records (by id).
func noneOf(t testing.TB, a *archiver.Archive, recs []archiver.Record) {
	t.Helper()
	bad := map[string]bool{}
	for _, r := range recs {
		bad[r.Event.Subject+"\x00"+r.Event.ID] = true
	}
	for _, r := range scanAll(t, a) {
		if bad[r.Event.Subject+"\x00"+r.Event.ID] {
			t.Fatalf("event %s/%s of an orphan object is in the tables", r.Event.Subject, r.Event.ID)
		}
	}
}

func testMigrateLegacy(t *testing.T, api archiver.S3API, bucket string) {
	ctx := context.Background()
	const prefix = "archive"
	fix := uploadLegacy(t, api, bucket, prefix)
	a := newArchive(t, api, archiver.Config{Bucket: bucket, Prefix: prefix})
	before := listKeys(t, api, bucket, prefix+"/")

	// A dry run changes nothing, and says what it would do.
	st, err := a.Migrate(ctx, archiver.MigrateOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Partitions != fix.partitions || st.Migrated != fix.partitions || st.Skipped != 0 || st.Records != 0 || !st.DryRun || st.Objects != len(fix.oldKeys)-len(fix.manifests) {
		t.Fatalf("dry run: %+v", st)
	}
	if after := listKeys(t, api, bucket, prefix+"/"); !slices.Equal(before, after) {
		t.Fatalf("dry run changed the bucket: %d keys, then %d", len(before), len(after))
	}

	// The migration.
	var progress []archiver.MigrateProgress
	st, err = a.Migrate(ctx, archiver.MigrateOptions{Progress: func(p archiver.MigrateProgress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migration: %+v", st)
	if st.Tables != 4 || st.Partitions != fix.partitions || st.Migrated != fix.partitions || st.Skipped != 0 || st.Refused != 0 ||
		st.Records != len(fix.listed) || st.Duplicates == 0 || st.Files != fix.partitions || st.Bytes == 0 || st.Deleted != 0 {
		t.Fatalf("migration: %+v (want %d records of %d partitions)", st, len(fix.listed), fix.partitions)
	}
	if len(progress) != fix.partitions {
		t.Fatalf("%d progress reports, want %d", len(progress), fix.partitions)
	}
	for _, p := range progress {
		if p.Status != archiver.MigrateMigrated || p.ID == "" || p.Files != 1 {
			t.Fatalf("progress: %+v", p)
		}
	}
	exactlyOnce(t, a, fix.listed) // every listed event once, the orphan's none
	noneOf(t, a, fix.orphans)
	for _, tb := range archiver.Tables() {
		dates, _ := a.Partitions(ctx, tb.Name)
		for _, d := range dates {
			keys, err := a.Objects(ctx, tb.Name, d)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, prefix+"/"+tb.Name+"/data/event_date="+d+"/migrated-") {
					t.Fatalf("table %s holds %s", tb.Name, k)
				}
			}
		}
	}
	for _, k := range append(slices.Clone(fix.oldKeys), fix.orphanKeys...) {
		if !exists(t, api, bucket, k) {
			t.Fatalf("%s was deleted without --delete-old", k)
		}
	}

	// A second run changes nothing.
	keys := listKeys(t, api, bucket, prefix+"/")
	st, err = a.Migrate(ctx, archiver.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped != fix.partitions || st.Migrated != 0 || st.Files != 0 || st.Records != 0 {
		t.Fatalf("second run: %+v", st)
	}
	if after := listKeys(t, api, bucket, prefix+"/"); !slices.Equal(keys, after) {
		t.Fatalf("second run changed the bucket: %d keys, then %d", len(keys), len(after))
	}

	// Compaction replaces the migrated files; a re-run still knows the
	// partitions are migrated.
	for _, tb := range archiver.Tables() {
		dates, _ := a.Partitions(ctx, tb.Name)
		for _, d := range dates {
			if _, err := a.Compact(ctx, tb.Name, d, all); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err = a.Migrate(ctx, archiver.MigrateOptions{})
	if err != nil || st.Skipped != fix.partitions || st.Records != 0 {
		t.Fatalf("run after compaction: %+v, %v", st, err)
	}
	exactlyOnce(t, a, fix.listed)

	// --delete-old deletes the listed objects and the manifests, and only
	// those.
	st, err = a.Migrate(ctx, archiver.MigrateOptions{DeleteOld: true})
	if err != nil || st.Skipped != fix.partitions || st.Deleted != len(fix.oldKeys) {
		t.Fatalf("delete-old: %+v, %v (want %d deleted)", st, err, len(fix.oldKeys))
	}
	for _, k := range fix.oldKeys {
		if exists(t, api, bucket, k) {
			t.Fatalf("%s is still there after --delete-old", k)
		}
	}
	for _, k := range fix.orphanKeys {
		if !exists(t, api, bucket, k) {
			t.Fatalf("the unlisted %s was deleted", k)
		}
	}
	exactlyOnce(t, a, fix.listed)
	st, err = a.Migrate(ctx, archiver.MigrateOptions{DeleteOld: true})
	if err != nil || st.Partitions != 0 {
		t.Fatalf("run after delete-old: %+v, %v", st, err)
	}
}

// TestMigrateLegacyArchive migrates the fixture archive (made by the old
// code) on the in-memory S3.
func TestMigrateLegacyArchive(t *testing.T) {
	testMigrateLegacy(t, s3mem.New("bkt"), "bkt")
}

// TestMigrateLegacyArchiveMinIO does the same on MinIO (skips without it).
func TestMigrateLegacyArchiveMinIO(t *testing.T) {
	c, bucket := newBucket(t)
	testMigrateLegacy(t, c.S3, bucket)
}

// oldRecords returns the records that the objects the remaining manifests
// list still hold: what an old reader would still find.
func oldRecords(t testing.TB, a *archiver.Archive, api archiver.S3API, bucket string, fix legacyFixture) []archiver.Record {
	t.Helper()
	ctx := context.Background()
	var out []archiver.Record
	for _, m := range fix.manifests {
		if !exists(t, api, bucket, m) {
			continue
		}
		o, err := api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(m)})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(o.Body)
		o.Body.Close()
		for _, line := range strings.Fields(buf.String()) {
			key := strings.TrimPrefix(line, "s3://"+bucket+"/")
			if !exists(t, api, bucket, key) {
				continue
			}
			recs, err := a.Read(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, recs...)
		}
	}
	return out
}

// TestMigrateCrashSafety crashes a migration with --delete-old after each
// of its S3 mutations in turn (the k-th run lets k mutations through, then
// every one fails: data files, Iceberg metadata, the markers, the
// deletions). After each crash no event is lost (each is in the table, at
// most once, or still in an old object its manifest lists) and a re-run
// ends with every event once in the table and the old objects deleted.
func TestMigrateCrashSafety(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	tables := []string{archiver.TableGitHubJobs}
	for k := 0; ; k++ {
		prefix := "crash-" + strconv.Itoa(k)
		fix := uploadLegacy(t, mem, "bkt", prefix)
		want := fix.byTable[archiver.TableGitHubJobs]
		f := newFaultS3(mem)
		crashing := newArchive(t, f, archiver.Config{Bucket: "bkt", Prefix: prefix})
		f.crashAfter(k)
		st, err := crashing.Migrate(ctx, archiver.MigrateOptions{Tables: tables, DeleteOld: true})
		if err == nil {
			if k < 5 || st.Migrated != 2 || st.Records != len(want) {
				t.Fatalf("uninterrupted migration after %d mutations: %+v", k, st)
			}
			t.Logf("a migration of %d partitions makes %d S3 mutations; crashed after each", st.Partitions, k)
			return
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("crash after %d mutations: %v", k, err)
		}
		if !strings.Contains(err.Error(), "partition event_date=") && !strings.Contains(err.Error(), "create table") {
			t.Fatalf("crash after %d mutations: the error names no partition: %v", k, err)
		}
		reader := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: prefix})
		inTable := scanAll(t, reader)
		ids := map[string]int{}
		for _, r := range inTable {
			ids[r.Event.Subject+"\x00"+r.Event.ID]++
		}
		for id, n := range ids {
			if n > 1 {
				t.Fatalf("crash after %d: event %q is in the table %d times", k, id, n)
			}
		}
		for _, r := range oldRecords(t, reader, mem, "bkt", fix) {
			ids[r.Event.Subject+"\x00"+r.Event.ID]++
		}
		for _, r := range want {
			if ids[r.Event.Subject+"\x00"+r.Event.ID] == 0 {
				t.Fatalf("crash after %d: event %s/%s is neither in the table nor in a listed old object", k, r.Event.Subject, r.Event.ID)
			}
		}

		if _, err := reader.Migrate(ctx, archiver.MigrateOptions{Tables: tables, DeleteOld: true}); err != nil {
			t.Fatalf("re-run after crash %d: %v", k, err)
		}
		exactlyOnce(t, reader, want)
		noneOf(t, reader, fix.orphans)
		for _, key := range fix.oldKeys {
			if strings.Contains(key, "/"+archiver.TableGitHubJobs+"/") && exists(t, mem, "bkt", key) {
				t.Fatalf("re-run after crash %d: %s is still there", k, key)
			}
		}
		if k > 100 {
			t.Fatal("the migration never finished")
		}
	}
}

// TestMigrateDeletesOnlyAfterCommit: when the commit fails, --delete-old
// deletes nothing, and the error names the partition.
func TestMigrateDeletesOnlyAfterCommit(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	fix := uploadLegacy(t, mem, "bkt", "archive")
	f := newFaultS3(mem)
	a := newArchive(t, f, archiver.Config{Bucket: "bkt", Prefix: "archive"})
	f.setFail(func(op, key string) bool { return op == "PutObject" && strings.Contains(key, "/metadata/snap-") })
	_, err := a.Migrate(ctx, archiver.MigrateOptions{DeleteOld: true})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "partition event_date=") {
		t.Fatalf("failed commit: %v", err)
	}
	t.Logf("error: %v", err)
	for _, k := range fix.oldKeys {
		if !exists(t, mem, "bkt", k) {
			t.Fatalf("%s was deleted although its partition's commit failed", k)
		}
	}
	f.heal()
	if _, err := a.Migrate(ctx, archiver.MigrateOptions{DeleteOld: true}); err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, a, fix.listed)
}

// TestMigrateRefusesChangedManifest: a manifest that changed after its
// partition was migrated (the old archiver kept running) is refused with
// an error naming the partition; the other partitions are skipped as
// migrated.
func TestMigrateRefusesChangedManifest(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	fix := uploadLegacy(t, mem, "bkt", "archive")
	a := newArchive(t, mem, archiver.Config{Bucket: "bkt", Prefix: "archive"})
	if _, err := a.Migrate(ctx, archiver.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The old archiver lists its orphan after all.
	orphan := fix.orphanKeys[0]
	dir := orphan[:strings.LastIndexByte(orphan, '/')]
	date := strings.TrimPrefix(dir[strings.LastIndexByte(dir, '/')+1:], "event_date=")
	manifest := "archive/_symlink/" + archiver.TableGitHubJobs + "/event_date=" + date + "/manifest"
	o, err := mem.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String(manifest)})
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(o.Body)
	body.WriteString("s3://bkt/" + orphan + "\n")
	if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(manifest), Body: bytes.NewReader(body.Bytes())}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, skipped int) {
		t.Helper()
		st, err := a.Migrate(ctx, archiver.MigrateOptions{DeleteOld: true})
		if !errors.Is(err, archiver.ErrMigrationConflict) || !strings.Contains(err.Error(), archiver.TableGitHubJobs+" partition event_date="+date) {
			t.Fatalf("%s: %v", what, err)
		}
		if st.Refused != 1 || st.Skipped != skipped {
			t.Fatalf("%s: %+v", what, st)
		}
		if !exists(t, mem, "bkt", manifest) || !exists(t, mem, "bkt", orphan) {
			t.Fatalf("%s: the refused partition's old objects were deleted", what)
		}
		exactlyOnce(t, a, fix.listed)
	}
	check("changed manifest", fix.partitions-1) // and --delete-old deletes the others
	// Without its marker (a crash between the commit and the marker), the
	// table's migrated files tell the same.
	if _, err := mem.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("archive/_migrated/" + archiver.TableGitHubJobs + "/event_date=" + date)}); err != nil {
		t.Fatal(err)
	}
	check("changed manifest, no marker", 0)
}
