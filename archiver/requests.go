package archiver

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Requests counts S3 requests by operation.
type S3Requests struct {
	Get, Put, List, Delete int64
}

// Total is the number of requests.
func (r S3Requests) Total() int64 { return r.Get + r.Put + r.List + r.Delete }

// Sub returns r minus o: the requests made between two readings.
func (r S3Requests) Sub(o S3Requests) S3Requests {
	return S3Requests{Get: r.Get - o.Get, Put: r.Put - o.Put, List: r.List - o.List, Delete: r.Delete - o.Delete}
}

// Requests returns the S3 requests the archive has made since New: its
// own and those of the Iceberg library through it (table metadata,
// manifests), failed ones included. Take it before and after a call and
// Sub the two to price the call (reconcile reports its requests so).
func (a *Archive) Requests() S3Requests { return a.requests.counts() }

// requestCounter is an S3API that counts the requests it passes on.
type requestCounter struct {
	S3API
	get, put, list, del atomic.Int64
}

func (c *requestCounter) counts() S3Requests {
	return S3Requests{Get: c.get.Load(), Put: c.put.Load(), List: c.list.Load(), Delete: c.del.Load()}
}

func (c *requestCounter) GetObject(ctx context.Context, in *s3.GetObjectInput, o ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	c.get.Add(1)
	return c.S3API.GetObject(ctx, in, o...)
}

func (c *requestCounter) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	c.put.Add(1)
	return c.S3API.PutObject(ctx, in, o...)
}

func (c *requestCounter) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, o ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	c.list.Add(1)
	return c.S3API.ListObjectsV2(ctx, in, o...)
}

func (c *requestCounter) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, o ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	c.del.Add(1)
	return c.S3API.DeleteObject(ctx, in, o...)
}
