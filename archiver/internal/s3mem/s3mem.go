// Package s3mem is an in-memory S3 with the subset of the API the archiver
// uses: PutObject (with If-Match and If-None-Match: *), GetObject (with a
// one-range Range header),
// DeleteObject and ListObjectsV2 (prefix, delimiter, pagination). It answers
// like S3 does: *types.NoSuchKey for a missing key, 412 PreconditionFailed
// for a failed condition, quoted MD5 ETags, keys listed in byte order. It
// passes the same conformance suite (archiver/internal/s3test) as MinIO.
//
// It is safe for concurrent use; every call is atomic.
package s3mem

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
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

func apiError(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

func (s *S3) bucket(name *string) (map[string]object, error) {
	b, ok := s.buckets[aws.ToString(name)]
	if !ok {
		return nil, &types.NoSuchBucket{Message: aws.String("no such bucket: " + aws.ToString(name))}
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
	switch {
	case in.IfNoneMatch != nil && aws.ToString(in.IfNoneMatch) != "*":
		return nil, apiError("NotImplemented", "If-None-Match supports only *")
	case in.IfNoneMatch != nil && exists:
		return nil, apiError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	case in.IfMatch != nil && !exists:
		return nil, &types.NoSuchKey{Message: aws.String("The specified key does not exist.")}
	case in.IfMatch != nil && aws.ToString(in.IfMatch) != cur.etag:
		return nil, apiError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
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
		return nil, &types.NoSuchKey{Message: aws.String("The specified key does not exist.")}
	}
	body, contentRange := o.body, (*string)(nil)
	if r := aws.ToString(in.Range); r != "" {
		lo, hi, ok := byteRange(r, int64(len(o.body)))
		if !ok {
			return nil, &smithy.GenericAPIError{Code: "InvalidRange", Message: "The requested range is not satisfiable"}
		}
		body = o.body[lo : hi+1]
		contentRange = aws.String(fmt.Sprintf("bytes %d-%d/%d", lo, hi, len(o.body)))
	}
	return &s3.GetObjectOutput{
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: aws.Int64(int64(len(body))),
		ContentRange: contentRange, ETag: aws.String(o.etag), LastModified: aws.Time(o.modified),
	}, nil
}

// byteRange reads an HTTP Range header of one range, "bytes=a-b", "bytes=a-"
// or "bytes=-n" (the last n bytes), clamped to size as S3 does.
func byteRange(h string, size int64) (lo, hi int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	a, b, dash := strings.Cut(spec, "-")
	if !found || !dash || size == 0 {
		return 0, 0, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, false
		}
		return max(0, size-n), size - 1, true
	}
	lo, err := strconv.ParseInt(a, 10, 64)
	if err != nil || lo >= size {
		return 0, 0, false
	}
	hi = size - 1
	if b != "" {
		if hi, err = strconv.ParseInt(b, 10, 64); err != nil || hi < lo {
			return 0, 0, false
		}
		hi = min(hi, size-1)
	}
	return lo, hi, true
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
	prefix, delim := aws.ToString(in.Prefix), aws.ToString(in.Delimiter)
	limit := int(aws.ToInt32(in.MaxKeys))
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	after, skip := aws.ToString(in.StartAfter), ""
	if t := aws.ToString(in.ContinuationToken); t != "" {
		// "k<key>": resume after a key; "p<prefix>": after a common prefix.
		after = t[1:]
		if t[0] == 'p' {
			skip = after
		}
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		if strings.HasPrefix(k, prefix) && k > after && (skip == "" || !strings.HasPrefix(k, skip)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := &s3.ListObjectsV2Output{Name: in.Bucket, Prefix: in.Prefix, Delimiter: in.Delimiter, IsTruncated: aws.Bool(false)}
	n := 0
	token := ""
	for _, k := range keys {
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				cp := k[:len(prefix)+i+len(delim)]
				if len(out.CommonPrefixes) > 0 && aws.ToString(out.CommonPrefixes[len(out.CommonPrefixes)-1].Prefix) == cp {
					continue
				}
				if n == limit {
					out.IsTruncated = aws.Bool(true)
					break
				}
				out.CommonPrefixes = append(out.CommonPrefixes, types.CommonPrefix{Prefix: aws.String(cp)})
				n++
				token = "p" + cp
				continue
			}
		}
		if n == limit {
			out.IsTruncated = aws.Bool(true)
			break
		}
		o := b[k]
		out.Contents = append(out.Contents, types.Object{Key: aws.String(k), Size: aws.Int64(int64(len(o.body))), ETag: aws.String(o.etag), LastModified: aws.Time(o.modified)})
		n++
		token = "k" + k
	}
	out.KeyCount = aws.Int32(int32(n))
	if aws.ToBool(out.IsTruncated) {
		out.NextContinuationToken = aws.String(token)
	}
	return out, nil
}
