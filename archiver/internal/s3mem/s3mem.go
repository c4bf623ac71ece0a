// Package s3mem is an in-memory S3 with the subset of the API the archiver
// uses: PutObject (with If-Match and If-None-Match: *), GetObject (with a
// one-range Range header),
// DeleteObject and ListObjectsV2 (prefix, delimiter, pagination). It answers
// like S3 does: *types.NoSuchKey for a missing key, 412 PreconditionFailed
// for a failed condition, quoted MD5 ETags, keys listed in byte order. It
// passes the same conformance suite (archiver/internal/s3test) as MinIO and
// shares its server-side answers with archiver/s3fs (archiver/internal/s3serve).
//
// It is safe for concurrent use; every call is atomic.
package s3mem

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver/internal/s3serve"
)

type object struct {
	body     []byte
	etag     string
	modified time.Time
}

// S3 is the in-memory store. The zero value is not usable; call New.
type S3 struct {
	mu      sync.Mutex
	buckets map[string]map[string]object
	now     func() time.Time
	calls   map[string]int
}

// New returns an empty store holding the given buckets.
func New(buckets ...string) *S3 {
	s := &S3{buckets: map[string]map[string]object{}, now: time.Now, calls: map[string]int{}}
	for _, b := range buckets {
		s.buckets[b] = map[string]object{}
	}
	return s
}

// SetClock replaces the clock that stamps LastModified.
func (s *S3) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Calls returns how often each operation was called.
func (s *S3) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// Keys returns every key of a bucket under prefix, sorted.
func (s *S3) Keys(bucket, prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.buckets[bucket] {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (s *S3) bucket(name *string) (map[string]object, error) {
	b, ok := s.buckets[aws.ToString(name)]
	if !ok {
		return nil, s3serve.NoSuchBucket(aws.ToString(name))
	}
	return b, nil
}

// PutObject stores an object, honouring IfMatch and IfNoneMatch ("*" only).
func (s *S3) PutObject(ctx context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var body []byte
	if in.Body != nil {
		var err error
		if body, err = io.ReadAll(in.Body); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["PutObject"]++
	b, err := s.bucket(in.Bucket)
	if err != nil {
		return nil, err
	}
	key := aws.ToString(in.Key)
	cur, exists := b[key]
	if err := s3serve.CheckPut(in, exists, cur.etag); err != nil {
		return nil, err
	}
	sum := md5.Sum(body)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	b[key] = object{body: body, etag: etag, modified: s.now().UTC().Truncate(time.Second)}
	return &s3.PutObjectOutput{ETag: aws.String(etag)}, nil
}

// GetObject returns an object and its ETag.
func (s *S3) GetObject(ctx context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["GetObject"]++
	b, err := s.bucket(in.Bucket)
	if err != nil {
		return nil, err
	}
	o, ok := b[aws.ToString(in.Key)]
	if !ok {
		return nil, s3serve.NoSuchKey()
	}
	body, contentRange := o.body, (*string)(nil)
	if r := aws.ToString(in.Range); r != "" {
		lo, hi, ok := s3serve.ByteRange(r, int64(len(o.body)))
		if !ok {
			return nil, s3serve.InvalidRange()
		}
		body = o.body[lo : hi+1]
		contentRange = aws.String(s3serve.ContentRange(lo, hi, int64(len(o.body))))
	}
	return &s3.GetObjectOutput{
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: aws.Int64(int64(len(body))),
		ContentRange: contentRange, ETag: aws.String(o.etag), LastModified: aws.Time(o.modified),
	}, nil
}

// DeleteObject removes an object; a missing key is not an error.
func (s *S3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, _ ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["DeleteObject"]++
	b, err := s.bucket(in.Bucket)
	if err != nil {
		return nil, err
	}
	delete(b, aws.ToString(in.Key))
	return &s3.DeleteObjectOutput{}, nil
}

// ListObjectsV2 lists keys in byte order, grouping by Delimiter, at most
// MaxKeys (default 1000) entries a page.
func (s *S3) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["ListObjectsV2"]++
	b, err := s.bucket(in.Bucket)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	return s3serve.ListPage(in, keys, func(k string) types.Object {
		o := b[k]
		return types.Object{Size: aws.Int64(int64(len(o.body))), ETag: aws.String(o.etag), LastModified: aws.Time(o.modified)}
	}), nil
}
