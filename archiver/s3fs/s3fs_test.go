package s3fs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/archiver/internal/s3test"
	"github.com/streamfold/streamfold/archiver/s3fs"
)

func newStore(t *testing.T, buckets ...string) *s3fs.S3 {
	t.Helper()
	s, err := s3fs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		if err := s.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestConformance runs the suite the in-memory fake and MinIO pass.
func TestConformance(t *testing.T) {
	s3test.Run(t, newStore(t, "b"), "b", "conformance")
}

// TestTwoStoresOneRoot: two stores on one root (two processes sharing a
// warehouse) see each other's writes, and their conditional writes exclude
// each other.
func TestTwoStoresOneRoot(t *testing.T) {
	root := t.TempDir()
	a, err := s3fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3fs.New(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(s *s3fs.S3, body string, ifNoneMatch *string) error {
		_, err := s.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k/v"), Body: bytes.NewReader([]byte(body)), IfNoneMatch: ifNoneMatch})
		return err
	}
	if err := put(a, "from a", aws.String("*")); err != nil {
		t.Fatal(err)
	}
	if err := put(b, "from b", aws.String("*")); !s3test.PreconditionFailed(err) {
		t.Fatalf("second If-None-Match put through another store: %v; want PreconditionFailed", err)
	}
	got, err := os.ReadFile(filepath.Join(root, "bkt", "k", "v"))
	if err != nil || string(got) != "from a" {
		t.Fatalf("file = %q, %v; want the first write at ROOT/bkt/k/v", got, err)
	}
}

// TestRefused: what S3 accepts but a filesystem cannot hold, and a missing
// bucket, are errors with S3's codes; nothing is written.
func TestRefused(t *testing.T) {
	s := newStore(t, "bkt")
	ctx := context.Background()
	put := func(bucket, key string) error {
		_, err := s.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("x"))})
		return err
	}
	if err := put("bkt", "a/b"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, bucket, key, code string
	}{
		{"empty segment", "bkt", "a//b", "InvalidArgument"},
		{"leading slash", "bkt", "/a", "InvalidArgument"},
		{"trailing slash", "bkt", "a/", "InvalidArgument"},
		{"dot dot", "bkt", "a/../../x", "InvalidArgument"},
		{"object under an object", "bkt", "a/b/c", "InvalidArgument"},
		{"object over a prefix", "bkt", "a", "InvalidArgument"},
		{"missing bucket", "nope", "a", "NoSuchBucket"},
		{"hidden bucket", ".tmp", "a", "NoSuchBucket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ae smithy.APIError
			if err := put(tc.bucket, tc.key); !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
				t.Fatalf("put %s/%s: %v; want %s", tc.bucket, tc.key, err, tc.code)
			}
		})
	}
	out, err := s.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")})
	if err != nil || len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "a/b" {
		t.Fatalf("listing after refused puts = %v, %v; want only a/b", out, err)
	}
}

// TestDeleteTidies: deleting the last object under a prefix removes the
// directories left empty, and the temporary files never show.
func TestDeleteTidies(t *testing.T) {
	s := newStore(t, "bkt")
	ctx := context.Background()
	if _, err := s.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("x/y/z"), Body: bytes.NewReader(nil)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("x/y/z")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "bkt", "x")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("x/ after its last object was deleted: %v; want gone", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "bkt")); err != nil {
		t.Fatalf("the bucket went with it: %v", err)
	}
	tmp, err := os.ReadDir(filepath.Join(s.Root(), ".tmp"))
	if err != nil || len(tmp) != 0 {
		t.Fatalf(".tmp = %v, %v; want empty after the writes", tmp, err)
	}
}
