package archiver_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// ownerCheck is an S3API that records the ExpectedBucketOwner of every
// request it passes on.
type ownerCheck struct {
	archiver.S3API
	mu     sync.Mutex
	owners map[string][]string // by operation
}

func (o *ownerCheck) note(op string, owner *string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owners[op] = append(o.owners[op], aws.ToString(owner))
}

func (o *ownerCheck) PutObject(ctx context.Context, in *s3.PutObjectInput, f ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	o.note("PutObject", in.ExpectedBucketOwner)
	return o.S3API.PutObject(ctx, in, f...)
}

func (o *ownerCheck) GetObject(ctx context.Context, in *s3.GetObjectInput, f ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	o.note("GetObject", in.ExpectedBucketOwner)
	return o.S3API.GetObject(ctx, in, f...)
}

func (o *ownerCheck) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, f ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	o.note("DeleteObject", in.ExpectedBucketOwner)
	return o.S3API.DeleteObject(ctx, in, f...)
}

func (o *ownerCheck) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, f ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	o.note("ListObjectsV2", in.ExpectedBucketOwner)
	return o.S3API.ListObjectsV2(ctx, in, f...)
}

// TestExpectedBucketOwner: with Config.ExpectedBucketOwner every request
// of writing, reading, compacting (which deletes) and listing names the
// owner, so that S3 refuses a bucket of another account that took the
// name; without it none does; a malformed account id is refused.
func TestExpectedBucketOwner(t *testing.T) {
	for _, owner := range []string{"123456789012", ""} {
		mem := s3mem.New("arch")
		api := &ownerCheck{S3API: mem, owners: map[string][]string{}}
		// The tables were made a month ago (an orphan below is that old).
		a, err := archiver.New(api, archiver.Config{Bucket: "arch", Prefix: "archive", ExpectedBucketOwner: owner, Catalog: "sqlite:" + t.TempDir() + "/c.db",
			Now: func() time.Time { return time.Now().Add(-31 * 24 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		recs := simRecords(t, 5, 300, 1)
		if _, err := a.WriteBatch(ctx, recs[:150]); err != nil {
			t.Fatal(err)
		}
		if _, err := a.WriteBatch(ctx, recs[150:]); err != nil {
			t.Fatal(err)
		}
		tables, dates := 0, 0
		for _, table := range []string{"github_jobs", "messages", "album_workflow", "agent_executions"} {
			ds, err := a.Partitions(ctx, table)
			if err != nil {
				t.Fatal(err)
			}
			tables++
			for _, d := range ds {
				dates++
				if _, err := a.Compact(ctx, table, d, archiver.CompactOptions{MinAge: -1}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := a.Maintain(ctx, table, archiver.MaintainOptions{SnapshotAge: time.Nanosecond, RetainSnapshots: 1}); err != nil {
				t.Fatal(err)
			}
			// An old orphan (a failed commit's file): orphan cleanup deletes it.
			mem.SetClock(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
			if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("arch"), Key: aws.String("archive/" + table + "/data/orphan.parquet"), Body: strings.NewReader("x")}); err != nil {
				t.Fatal(err)
			}
			mem.SetClock(time.Now)
			if st, err := a.Maintain(ctx, table, archiver.MaintainOptions{}); err != nil || st.OrphansDeleted != 1 {
				t.Fatalf("maintain %s: %+v %v; want the old orphan deleted", table, st, err)
			}
		}
		n := 0
		if err := a.Scan(ctx, func(archiver.Record) error { n++; return nil }); err != nil || n != len(recs) {
			t.Fatalf("scan: %d records, %v; want %d", n, err, len(recs))
		}
		for _, op := range []string{"PutObject", "GetObject", "DeleteObject", "ListObjectsV2"} {
			if len(api.owners[op]) == 0 {
				t.Fatalf("owner %q: no %s request (%d tables, %d partitions compacted)", owner, op, tables, dates)
			}
			for _, got := range api.owners[op] {
				if got != owner {
					t.Fatalf("owner %q: a %s request named %q", owner, op, got)
				}
			}
		}
	}
	_, err := archiver.New(s3mem.New("arch"), archiver.Config{Bucket: "arch", ExpectedBucketOwner: "12345"})
	if err == nil || !strings.Contains(err.Error(), "ExpectedBucketOwner: must be a 12-digit AWS account id") {
		t.Fatalf("a short account id: %v", err)
	}
}
