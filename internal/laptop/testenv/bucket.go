package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// BucketPrefix starts the name of every bucket Bucket makes up, so that
// buckets a killed test run left behind on MinIO are easy to recognise.
const BucketPrefix = "streamfold-test-"

// Bucket creates an S3 bucket on the local MinIO and returns its name: name
// when it is not empty, otherwise BucketPrefix and 12 random lower-case hex
// digits. c comes from S3Clients. A bucket that cannot be created (including
// one that already exists) fails the test with a message naming it.
//
// When the test ends every object in the bucket (the current version of each
// key, listed page by page) and then the bucket itself are deleted. The
// clean-up is best effort: a failure is logged, naming the bucket, and does
// not fail the test.
func Bucket(t testing.TB, c *awsclient.Clients, name string) string {
	t.Helper()
	if name == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name = BucketPrefix + hex.EncodeToString(b[:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("testenv: create bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := removeBucket(c.S3, name); err != nil {
			t.Logf("testenv: %v (the bucket is left behind)", err)
		}
	})
	return name
}

// removeBucket deletes every object of the bucket, one listing page (at most
// 1,000 keys, the DeleteObjects limit) at a time, then the bucket.
func removeBucket(api *s3.Client, bucket string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := s3.NewListObjectsV2Paginator(api, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("remove bucket %s: list objects: %w", bucket, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		out, err := api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("remove bucket %s: delete objects: %w", bucket, err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("remove bucket %s: delete objects: %d keys not deleted, e.g. %s: %s %s",
				bucket, len(out.Errors), aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
	}
	if _, err := api.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("remove bucket %s: %w", bucket, err)
	}
	return nil
}

// EventStream returns the stream ARN of the events table (schema.TableEvents)
// from the results Tables or SharedTables returned. When no result is the
// events table, or its StreamARN is empty, the test fails with a message
// listing the tables and streams that were found.
func EventStream(t testing.TB, res []provision.Result) string {
	t.Helper()
	for _, r := range res {
		if r.Logical == schema.TableEvents && r.StreamARN != "" {
			return r.StreamARN
		}
	}
	found := make([]string, len(res))
	for i, r := range res {
		found[i] = fmt.Sprintf("%s (%s) stream %q", r.Logical, r.Name, r.StreamARN)
	}
	t.Fatalf("testenv: no stream ARN for the %s table among %d tables: [%s]", schema.TableEvents, len(res), strings.Join(found, "; "))
	return ""
}
