package archiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3API is the part of the S3 client the archive uses (*s3.Client has it).
type S3API interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, optFns ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	s3.ListObjectsV2APIClient
}

// isNotFound reports a missing key.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return true
	}
	return httpStatus(err) == http.StatusNotFound
}

func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// object is a key's content and ETag.
type object struct {
	body []byte
}

// owner is the ExpectedBucketOwner of every request (nil: none).
func (a *Archive) owner() *string {
	if a.cfg.ExpectedBucketOwner == "" {
		return nil
	}
	return aws.String(a.cfg.ExpectedBucketOwner)
}

func (a *Archive) get(ctx context.Context, key string) (object, error) {
	out, err := a.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(a.cfg.Bucket), Key: aws.String(key), ExpectedBucketOwner: a.owner()})
	if err != nil {
		if isNotFound(err) {
			return object{}, &ObjectError{Op: "GetObject", Key: key, Err: errors.Join(ErrNotFound, err)}
		}
		return object{}, &ObjectError{Op: "GetObject", Key: key, Err: err}
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return object{}, &ObjectError{Op: "GetObject", Key: key, Err: err}
	}
	return object{body: body}, nil
}

func (a *Archive) put(ctx context.Context, key string, body []byte, contentType string) error {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(a.cfg.Bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String(contentType),

		ExpectedBucketOwner: a.owner(),
	}
	if _, err := a.api.PutObject(ctx, in); err != nil {
		return &ObjectError{Op: "PutObject", Key: key, Err: err}
	}
	return nil
}

func (a *Archive) delete(ctx context.Context, key string) error {
	_, err := a.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(a.cfg.Bucket), Key: aws.String(key), ExpectedBucketOwner: a.owner()})
	if err != nil && !isNotFound(err) {
		return &ObjectError{Op: "DeleteObject", Key: key, Err: err}
	}
	return nil
}

// listed is one object of a listing.
type listed struct {
	key      string
	size     int64
	modified time.Time
}

// list returns every object under prefix, in key order.
func (a *Archive) list(ctx context.Context, prefix string) ([]listed, error) {
	var out []listed
	err := a.listPages(ctx, prefix, "", func(p *s3.ListObjectsV2Output) {
		for _, o := range p.Contents {
			out = append(out, listed{key: aws.ToString(o.Key), size: aws.ToInt64(o.Size), modified: aws.ToTime(o.LastModified)})
		}
	})
	return out, err
}

// listDirs returns the common prefixes directly under prefix.
func (a *Archive) listDirs(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	err := a.listPages(ctx, prefix, "/", func(p *s3.ListObjectsV2Output) {
		for _, cp := range p.CommonPrefixes {
			out = append(out, aws.ToString(cp.Prefix))
		}
	})
	return out, err
}

func (a *Archive) listPages(ctx context.Context, prefix, delimiter string, fn func(*s3.ListObjectsV2Output)) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(a.cfg.Bucket), Prefix: aws.String(prefix), ExpectedBucketOwner: a.owner()}
	if delimiter != "" {
		in.Delimiter = aws.String(delimiter)
	}
	for {
		out, err := a.api.ListObjectsV2(ctx, in)
		if err != nil {
			return &ObjectError{Op: "ListObjectsV2", Key: prefix, Err: err}
		}
		fn(out)
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// forEach runs fn for i in [0, n) with at most limit in flight and returns
// the first error (the others are still waited for).
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, max(1, limit))
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		if ctx.Err() != nil {
			<-sem
			break
		}
		go func(i int) {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				errs <- err
				cancel()
			}
		}(i)
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errs)
	var first error
	for err := range errs {
		if first == nil || (errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first == nil {
		first = parent.Err() // the caller's context ended before every i ran
	}
	return first
}

func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("archiver: "+format+": %w", append(args, err)...)
}
