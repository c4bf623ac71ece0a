// Package s3test is the conformance suite for the S3 semantics the archiver
// relies on. Both the in-memory fake (s3mem) and a real server (MinIO in the
// integration tests) must pass it, so that tests run on the fake prove
// something about S3:
//
//   - read-after-write: GetObject returns what PutObject stored, with the
//     same ETag;
//   - a missing key is NoSuchKey (404);
//   - conditional writes: If-None-Match: * fails with 412 when the key
//     exists; If-Match fails with 412 when the ETag is stale, succeeds when
//     it is current; concurrent read-modify-writes lose no update;
//   - listings: byte order, Prefix, Delimiter (CommonPrefixes) and
//     pagination with continuation tokens;
//   - DeleteObject of a missing key succeeds.
package s3test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/archiver"
)

// API is the S3 subset under test: the archive's.
type API = archiver.S3API

// Run runs the suite against bucket, under a fresh key prefix.
func Run(t *testing.T, api API, bucket, prefix string) {
	ctx := context.Background()
	c := client{api: api, bucket: bucket}
	p := func(s string) string { return prefix + "/" + s }

	t.Run("ReadAfterWrite", func(t *testing.T) {
		etag := c.mustPut(t, p("rw/a"), "hello", nil, nil)
		body, getTag, err := c.get(ctx, p("rw/a"))
		if err != nil || body != "hello" || getTag != etag {
			t.Fatalf("get = %q, %s, %v; want hello, %s", body, getTag, err, etag)
		}
		etag2 := c.mustPut(t, p("rw/a"), "world", nil, nil)
		if etag2 == etag {
			t.Fatalf("ETag did not change with the content: %s", etag)
		}
		if body, _, _ := c.get(ctx, p("rw/a")); body != "world" {
			t.Fatalf("after overwrite get = %q, want world", body)
		}
	})
	t.Run("Range", func(t *testing.T) {
		// The archive's Iceberg file IO reads a file's tail with a suffix
		// range and learns the size from Content-Range.
		c.mustPut(t, p("range/a"), "0123456789", nil, nil)
		for _, tc := range []struct{ rng, body, contentRange string }{
			{"bytes=-4", "6789", "bytes 6-9/10"},
			{"bytes=-64", "0123456789", "bytes 0-9/10"},
			{"bytes=2-4", "234", "bytes 2-4/10"},
			{"bytes=8-", "89", "bytes 8-9/10"},
		} {
			out, err := c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(p("range/a")), Range: aws.String(tc.rng)})
			if err != nil {
				t.Fatalf("GetObject %s: %v", tc.rng, err)
			}
			b, err := io.ReadAll(out.Body)
			out.Body.Close()
			if err != nil || string(b) != tc.body || aws.ToString(out.ContentRange) != tc.contentRange {
				t.Errorf("GetObject %s = %q, Content-Range %q, %v; want %q, %q", tc.rng, b, aws.ToString(out.ContentRange), err, tc.body, tc.contentRange)
			}
		}
	})
	t.Run("NoSuchKey", func(t *testing.T) {
		_, _, err := c.get(ctx, p("missing/key"))
		var nsk *types.NoSuchKey
		if !errors.As(err, &nsk) && Status(err) != http.StatusNotFound {
			t.Fatalf("get of a missing key: %v; want NoSuchKey (404)", err)
		}
	})
	t.Run("IfNoneMatch", func(t *testing.T) {
		c.mustPut(t, p("inm/a"), "first", nil, aws.String("*"))
		_, err := c.put(ctx, p("inm/a"), "second", nil, aws.String("*"))
		if !PreconditionFailed(err) {
			t.Fatalf("If-None-Match: * on an existing key: %v; want 412 PreconditionFailed", err)
		}
		if body, _, _ := c.get(ctx, p("inm/a")); body != "first" {
			t.Fatalf("a failed conditional put changed the object to %q", body)
		}
	})
	t.Run("IfMatch", func(t *testing.T) {
		e1 := c.mustPut(t, p("im/a"), "v1", nil, nil)
		e2 := c.mustPut(t, p("im/a"), "v2", aws.String(e1), nil)
		_, err := c.put(ctx, p("im/a"), "v3", aws.String(e1), nil)
		if !PreconditionFailed(err) {
			t.Fatalf("If-Match with a stale ETag: %v; want 412 PreconditionFailed", err)
		}
		if body, tag, _ := c.get(ctx, p("im/a")); body != "v2" || tag != e2 {
			t.Fatalf("after a failed If-Match: %q %s, want v2 %s", body, tag, e2)
		}
	})
	t.Run("ConcurrentReadModifyWrite", func(t *testing.T) {
		const workers, each = 4, 5
		key := p("rmw/counter")
		c.mustPut(t, key, "0", nil, nil)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					for {
						body, tag, err := c.get(ctx, key)
						if err != nil {
							errs <- err
							return
						}
						n, _ := strconv.Atoi(body)
						_, err = c.put(ctx, key, strconv.Itoa(n+1), aws.String(tag), nil)
						if err == nil {
							break
						}
						if !PreconditionFailed(err) {
							errs <- err
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if body, _, _ := c.get(ctx, key); body != strconv.Itoa(workers*each) {
			t.Fatalf("counter = %s after %d conditional increments: updates were lost", body, workers*each)
		}
	})
	t.Run("List", func(t *testing.T) {
		keys := []string{"l/a/1", "l/a/2", "l/b/1", "l/c", "l/d/x/1", "l/e"}
		for _, k := range keys {
			c.mustPut(t, p(k), k, nil, nil)
		}
		all := c.list(t, p("l/"), "", 2)
		want := make([]string, len(keys))
		for i, k := range keys {
			want[i] = p(k)
		}
		if !slices.Equal(all.keys, want) {
			t.Fatalf("paged listing = %v, want %v", all.keys, want)
		}
		if all.pages < 3 { // S3 servers may end with an empty page
			t.Fatalf("listing of 6 keys, 2 a page, took %d pages", all.pages)
		}
		dirs := c.list(t, p("l/"), "/", 1)
		wantDirs := []string{p("l/a/"), p("l/b/"), p("l/d/")}
		if !slices.Equal(dirs.prefixes, wantDirs) || !slices.Equal(dirs.keys, []string{p("l/c"), p("l/e")}) {
			t.Fatalf("delimited listing = prefixes %v keys %v; want %v and [l/c l/e]", dirs.prefixes, dirs.keys, wantDirs)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		c.mustPut(t, p("del/a"), "x", nil, nil)
		for range 2 { // the second time the key is missing: still no error
			if _, err := api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(p("del/a"))}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
		if _, _, err := c.get(ctx, p("del/a")); err == nil {
			t.Fatal("deleted object is still there")
		}
	})
}

// PreconditionFailed reports a 412 (or S3's 409 ConditionalRequestConflict).
func PreconditionFailed(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
		return true
	}
	return Status(err) == http.StatusPreconditionFailed || Status(err) == http.StatusConflict
}

// Status returns the HTTP status of an SDK error, 0 if none.
func Status(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

type client struct {
	api    API
	bucket string
}

func (c client) put(ctx context.Context, key, body string, ifMatch, ifNoneMatch *string) (string, error) {
	out, err := c.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(c.bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(body)),
		ContentLength: aws.Int64(int64(len(body))), IfMatch: ifMatch, IfNoneMatch: ifNoneMatch,
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

func (c client) mustPut(t *testing.T, key, body string, ifMatch, ifNoneMatch *string) string {
	t.Helper()
	etag, err := c.put(context.Background(), key, body, ifMatch, ifNoneMatch)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	if etag == "" {
		t.Fatalf("put %s returned no ETag", key)
	}
	return etag
}

func (c client) get(ctx context.Context, key string) (string, string, error) {
	out, err := c.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(key)})
	if err != nil {
		return "", "", err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return string(b), aws.ToString(out.ETag), err
}

type listing struct {
	keys, prefixes []string
	pages          int
}

func (c client) list(t *testing.T, prefix, delim string, pageSize int32) listing {
	t.Helper()
	var l listing
	in := &s3.ListObjectsV2Input{Bucket: aws.String(c.bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(pageSize)}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	for {
		out, err := c.api.ListObjectsV2(context.Background(), in)
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		l.pages++
		for _, o := range out.Contents {
			l.keys = append(l.keys, aws.ToString(o.Key))
		}
		for _, cp := range out.CommonPrefixes {
			l.prefixes = append(l.prefixes, aws.ToString(cp.Prefix))
		}
		if !aws.ToBool(out.IsTruncated) {
			return l
		}
		if l.pages > 100 {
			t.Fatalf("list %s: more than 100 pages", prefix)
		}
		in.ContinuationToken = out.NextContinuationToken
		if aws.ToString(in.ContinuationToken) == "" {
			t.Fatalf("list %s: truncated page without NextContinuationToken", prefix)
		}
	}
}
