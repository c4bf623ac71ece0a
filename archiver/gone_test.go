package archiver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
)

// deleteObjects deletes every object of bucket under prefix.
func deleteObjects(t *testing.T, c *awsclient.Clients, bucket, prefix string) int {
	t.Helper()
	ctx := context.Background()
	out, err := c.S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			t.Fatal(err)
		}
	}
	return len(out.Contents)
}

// slogTo is a text logger writing to w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// streamBatch is the stream batch of recs, as Lambda delivers it.
func streamBatch(t *testing.T, recs []archiver.Record) events.DynamoDBEvent {
	t.Helper()
	var ev events.DynamoDBEvent
	for _, r := range recs {
		rec := streamRecord(t, r.Seq, "INSERT", eventItem(t, r))
		rec.EventID = r.StreamEventID
		ev.Records = append(ev.Records, rec)
	}
	return ev
}

// TestArchiveGone: when the table metadata the catalog points at, or the
// whole bucket, no longer exists, a batch fails at once with a *GoneError
// naming the table and what is missing, permanent (a local runner stops
// on it); the Lambda handler logs it, writes the ArchiveUnavailable
// metric line, and fails the batch from its first record.
func TestArchiveGone(t *testing.T) {
	ctx := context.Background()
	sa, sb := twoShards(t)
	check := func(t *testing.T, a *archiver.Archive, wantLocation func(string) bool) {
		t.Helper()
		var metrics, logs bytes.Buffer
		h := archiver.NewHandler(a, quietLog()).EmitMetrics(&metrics, "sf-test")
		start := time.Now()
		resp, err := h.Process(ctx, streamBatch(t, sb))
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("the failure took %s", took)
		}
		var gone *archiver.GoneError
		var p interface{ Permanent() bool }
		if !errors.As(err, &gone) || !errors.Is(err, archiver.ErrArchiveGone) || !errors.As(err, &p) || !p.Permanent() {
			t.Fatalf("Process: %v; want a permanent *GoneError", err)
		}
		if !strings.HasSuffix(gone.Table, "."+archiver.TableMessages) || !wantLocation(gone.Location) ||
			!strings.Contains(err.Error(), gone.Table) || !strings.Contains(err.Error(), gone.Location) {
			t.Fatalf("GoneError table %q, location %q: %v", gone.Table, gone.Location, err)
		}
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != sb[0].Seq {
			t.Fatalf("response %+v: want the batch's first record", resp)
		}
		line := metrics.String()
		if !strings.Contains(line, `"ArchiveUnavailable":1`) || !strings.Contains(line, `"Deployment":"sf-test"`) ||
			!strings.Contains(line, gone.Location) || !strings.Contains(line, `"Namespace":"Streamfold"`) {
			t.Fatalf("metric line %q", line)
		}
		// Handle, as Lambda runs it, reports the failure and no error.
		h = archiver.NewHandler(a, slogTo(&logs))
		if resp, err := h.Handle(ctx, streamBatch(t, sb)); err != nil || len(resp.BatchItemFailures) != 1 {
			t.Fatalf("Handle: %+v, %v", resp, err)
		}
		if !strings.Contains(logs.String(), "archive gone") || !strings.Contains(logs.String(), "location="+gone.Location) {
			t.Fatalf("log %q: want the error with the table and location", logs.String())
		}
	}

	t.Run("metadata deleted", func(t *testing.T) {
		c, bucket := newBucket(t)
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "arch"})
		write(t, a, sa, 1, 0)
		if n := deleteObjects(t, c, bucket, "arch/"+archiver.TableMessages+"/metadata/"); n == 0 {
			t.Fatal("no metadata to delete")
		}
		loc := func(l string) bool {
			return strings.HasPrefix(l, "s3://"+bucket+"/arch/"+archiver.TableMessages+"/metadata/") && strings.HasSuffix(l, ".metadata.json")
		}
		check(t, a, loc)                                                                    // the process that wrote the table
		check(t, newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "arch"}), loc) // a new one
	})
	t.Run("bucket deleted", func(t *testing.T) {
		c, bucket := newBucket(t)
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "arch"})
		write(t, a, sa, 1, 0)
		deleteObjects(t, c, bucket, "")
		if _, err := c.S3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		check(t, a, func(l string) bool { return l == "s3://"+bucket })
	})
}

// TestRegisterReplacesGoneMetadata: when the metadata file the catalog
// points at is deleted (a batch fails with a GoneError), Register reports
// the table as behind its location, and with Replace points the catalog at
// the newest metadata file left there: the history up to that version is
// back, and the next batch commits. A location without any metadata file
// left is an error naming the missing file, never an empty table.
func TestRegisterReplacesGoneMetadata(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	cfg := archiver.Config{Bucket: bucket, Prefix: "arch"}
	const tb = archiver.TableMessages
	sa, sb := twoShards(t)
	a := newArchive(t, c.S3, cfg)
	register := func(t *testing.T, a *archiver.Archive, opts archiver.RegisterOptions, action string) archiver.Registration {
		t.Helper()
		r, err := a.Register(ctx, tb, opts)
		if err != nil || r.Action != action {
			t.Fatalf("register %+v: %+v, %v; want %s", opts, r, err, action)
		}
		return r
	}
	write(t, a, sa, 1, 0)
	first := register(t, a, archiver.RegisterOptions{}, "present")
	write(t, a, sb, 1, 0)
	second := register(t, a, archiver.RegisterOptions{}, "present")
	if second.Version <= first.Version {
		t.Fatalf("the second batch's metadata is version %d, the first's %d", second.Version, first.Version)
	}
	key, ok := strings.CutPrefix(second.Metadata, "s3://"+bucket+"/")
	if !ok {
		t.Fatalf("metadata %s is not in bucket %s", second.Metadata, bucket)
	}
	if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Fatal(err)
	}

	b := newArchive(t, c.S3, cfg)
	if _, err := b.WriteBatch(ctx, sb); !errors.Is(err, archiver.ErrArchiveGone) || !strings.Contains(err.Error(), "register --replace") {
		t.Fatalf("a batch with the catalog's metadata deleted: %v, want a GoneError naming the remedy", err)
	}
	for _, opts := range []archiver.RegisterOptions{{}, {Replace: true, DryRun: true}} {
		r := register(t, b, opts, "behind")
		if r.Previous != second.Metadata || r.Metadata != second.Metadata {
			t.Fatalf("register %+v: %+v, want the deleted %s as the catalog's", opts, r, second.Metadata)
		}
	}
	r := register(t, b, archiver.RegisterOptions{Replace: true}, "replaced")
	if r.Previous != second.Metadata || r.Version >= second.Version || r.Version < first.Version || r.Snapshots == 0 {
		t.Fatalf("register --replace: %+v, want the newest metadata left (version %d to %d)", r, first.Version, second.Version-1)
	}
	register(t, b, archiver.RegisterOptions{}, "present")
	exactlyOnce(t, b, sa) // the deleted version's commit is gone with it
	write(t, b, sb, 1, 0)
	exactlyOnce(t, newArchive(t, c.S3, cfg), append(slices.Clone(sa), sb...))

	// Nothing left to register: an error, and the catalog is unchanged.
	cur := register(t, b, archiver.RegisterOptions{}, "present")
	if n := deleteObjects(t, c, bucket, "arch/"+tb+"/metadata/"); n == 0 {
		t.Fatal("no metadata to delete")
	}
	for _, opts := range []archiver.RegisterOptions{{}, {Replace: true}} {
		_, err := b.Register(ctx, tb, opts)
		if err == nil || !strings.Contains(err.Error(), cur.Metadata) || !strings.Contains(err.Error(), "holds no metadata file") {
			t.Fatalf("register %+v with no metadata at the location: %v, want an error naming %s", opts, err, cur.Metadata)
		}
	}
}

// TestWriterNeverRegistersAStagedCreate: a table's first metadata file at
// its location while the catalog has no table may be another writer's
// create in flight, which that writer deletes when its catalog insert
// loses (iceberg-go removes uncommitted metadata). A writer therefore
// creates the table rather than registering such a file, and the catalog
// never points at a file that is then deleted. (Found by
// TestConcurrentCommitters under load: "metadata ... does not exist".)
func TestWriterNeverRegistersAStagedCreate(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	cfg := archiver.Config{Bucket: bucket, Prefix: "arch"}
	const tb = archiver.TableMessages
	sa, sb := twoShards(t)
	a := newArchive(t, c.S3, cfg)
	write(t, a, sa, 1, 0)
	uri, ns := a.Catalog()
	dropFromCatalog(t, uri, ns, []string{tb}, false)
	// Leave only the version-0 file: what a writer sees while another's
	// create is between writing its metadata and inserting the entry.
	list, err := c.S3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("arch/" + tb + "/metadata/")})
	if err != nil {
		t.Fatal(err)
	}
	var staged string
	for _, o := range list.Contents {
		if strings.HasPrefix(path.Base(*o.Key), "00000-") && strings.HasSuffix(*o.Key, ".metadata.json") {
			staged = *o.Key
			continue
		}
		if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
			t.Fatal(err)
		}
	}
	if staged == "" {
		t.Fatal("no version-0 metadata file at the location")
	}

	b := newArchive(t, c.S3, cfg)
	write(t, b, sb, 1, 0)
	cur, err := b.Register(ctx, tb, archiver.RegisterOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := strings.CutPrefix(cur.Metadata, "s3://"+bucket+"/")
	obj, err := c.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), path.Base(staged)) {
		t.Fatalf("the writer's table %s descends from the staged file %s, which its creator deletes", cur.Metadata, staged)
	}
	// The racing creator loses its insert and removes its staged file.
	if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(staged)}); err != nil {
		t.Fatal(err)
	}
	r, err := newArchive(t, c.S3, cfg).Register(ctx, tb, archiver.RegisterOptions{})
	if err != nil || r.Action != "present" || strings.HasSuffix(r.Metadata, path.Base(staged)) {
		t.Fatalf("register after the staged file went: %+v, %v; want the table the writer created", r, err)
	}
	write(t, newArchive(t, c.S3, cfg), sa, 1, 0)
	exactlyOnce(t, newArchive(t, c.S3, cfg), append(slices.Clone(sb), sa...))
}
