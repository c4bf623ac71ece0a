package archiver

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// countingS3 counts GetObject requests.
type countingS3 struct {
	S3API
	gets atomic.Int64
}

func (c *countingS3) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.gets.Add(1)
	return c.S3API.GetObject(ctx, in, optFns...)
}

// TestSequentialReadIsTwoGets reads a file larger than the cached tail the
// way the Avro manifest reader does (4 KiB at a time, from the start): it
// costs the tail's GET and one more, not one GET per read, and the bytes
// are the object's. ReadAt below the tail still fetches only its range.
func TestSequentialReadIsTwoGets(t *testing.T) {
	mem := s3mem.New("b")
	body := make([]byte, 3*footerRead+123)
	for i := range body {
		body[i] = byte(i * 7)
	}
	if _, err := mem.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	api := &countingS3{S3API: mem}
	f := &s3FS{c: s3Client{api: api}}

	r, err := f.Open("s3://b/k")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(struct{ io.Reader }{r}, int64(len(body)+1)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the object's %d", len(got), len(body))
	}
	if n := api.gets.Load(); n != 2 {
		t.Errorf("a sequential read of %d bytes took %d GETs, want 2", len(body), n)
	}

	api.gets.Store(0)
	r, err = f.Open("s3://b/k")
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := r.(io.ReaderAt).ReadAt(p, 10); err != nil || !bytes.Equal(p, body[10:110]) {
		t.Fatalf("ReadAt: %v", err)
	}
	if n := api.gets.Load(); n != 2 {
		t.Errorf("open and one ReadAt took %d GETs, want 2", n)
	}
}
