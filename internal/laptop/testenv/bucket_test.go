package testenv_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema/provision"
)

// fatalTB is a testing.TB whose Fatalf records the message and ends the
// goroutine (as the real one does) without failing the enclosing test.
type fatalTB struct {
	testing.TB
	msg    string
	failed bool
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg, f.failed = fmt.Sprintf(format, args...), true
	runtime.Goexit()
}

// capture runs fn with a fatalTB on its own goroutine and reports whether it
// failed and with what message.
func capture(t *testing.T, fn func(tb testing.TB)) (msg string, failed bool) {
	t.Helper()
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg, f.failed
}

func TestEventStream(t *testing.T) {
	const arn = "arn:aws:dynamodb:ddblocal:000000000000:table/t1-dev-events/stream/2024-05-01T00:00:00.000"
	tests := []struct {
		name    string
		res     []provision.Result
		want    string
		wantErr string
	}{
		{
			name: "events table among others",
			res: []provision.Result{
				{Logical: "aggregates", Name: "t1-dev-aggregates"},
				{Logical: "events", Name: "t1-dev-events", StreamARN: arn},
			},
			want: arn,
		},
		{
			name:    "events table without a stream",
			res:     []provision.Result{{Logical: "events", Name: "t1-dev-events"}},
			wantErr: `testenv: no stream ARN for the events table among 1 tables: [events (t1-dev-events) stream ""]`,
		},
		{
			name: "no events table",
			res: []provision.Result{
				{Logical: "aggregates", Name: "t1-dev-aggregates"},
				{Logical: "checkpoints", Name: "t1-dev-checkpoints", StreamARN: "arn:x"},
			},
			wantErr: `testenv: no stream ARN for the events table among 2 tables: [aggregates (t1-dev-aggregates) stream ""; checkpoints (t1-dev-checkpoints) stream "arn:x"]`,
		},
		{
			name:    "no tables",
			wantErr: "testenv: no stream ARN for the events table among 0 tables: []",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			msg, failed := capture(t, func(tb testing.TB) { got = testenv.EventStream(tb, tt.res) })
			if tt.wantErr != "" {
				if !failed || msg != tt.wantErr {
					t.Fatalf("failed %v with %q, want failure %q", failed, msg, tt.wantErr)
				}
				return
			}
			if failed {
				t.Fatalf("failed: %s", msg)
			}
			if got != tt.want {
				t.Fatalf("EventStream = %q, want %q", got, tt.want)
			}
		})
	}
}

var randomBucket = regexp.MustCompile("^" + regexp.QuoteMeta(testenv.BucketPrefix) + "[0-9a-f]{12}$")

// TestBucket creates buckets with Bucket inside a subtest, fills them and
// checks that they are gone, objects and all, once the subtest has ended.
// 1,001 objects take two listing pages, so the clean-up's pagination runs.
func TestBucket(t *testing.T) {
	c := testenv.S3Clients(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	given := testenv.BucketPrefix + "given-" + hex.EncodeToString(b[:])
	tests := []struct {
		name    string
		arg     string // Bucket's name argument
		objects int
		check   func(t *testing.T, got string)
	}{
		{"random name, empty", "", 0, func(t *testing.T, got string) {
			if !randomBucket.MatchString(got) {
				t.Errorf("random bucket name %q does not match %s", got, randomBucket)
			}
		}},
		{"given name, two pages of objects", given, 1001, func(t *testing.T, got string) {
			if got != given {
				t.Errorf("Bucket(%q) = %q", given, got)
			}
		}},
	}
	for _, tt := range tests {
		var bucket string
		t.Run(tt.name, func(t *testing.T) {
			bucket = testenv.Bucket(t, c, tt.arg)
			tt.check(t, bucket)
			putObjects(t, c, bucket, tt.objects)
			if _, err := c.S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
				t.Fatalf("head bucket %s after Bucket: %v", bucket, err)
			}
		})
		if bucket == "" {
			continue // the subtest failed before Bucket returned
		}
		_, err := c.S3.HeadBucket(context.Background(), &s3.HeadBucketInput{Bucket: aws.String(bucket)})
		if nf := (*types.NotFound)(nil); !errors.As(err, &nf) {
			t.Errorf("%s: head bucket %s after the test ended: %v, want NotFound", tt.name, bucket, err)
		}
	}
}

func TestBucketFailsNamingTheBucket(t *testing.T) {
	c := testenv.S3Clients(t)
	existing := testenv.Bucket(t, c, "")
	tests := []struct {
		name, bucket string
	}{
		{"invalid name", "Not_A_Bucket"},
		{"already exists", existing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, failed := capture(t, func(tb testing.TB) { testenv.Bucket(tb, c, tt.bucket) })
			if want := "testenv: create bucket " + tt.bucket + ": "; !failed || !strings.HasPrefix(msg, want) {
				t.Fatalf("failed %v with %q, want a failure starting %q", failed, msg, want)
			}
		})
	}
}

// putObjects writes n small objects to the bucket, 16 at a time.
func putObjects(t *testing.T, c *awsclient.Clients, bucket string, n int) {
	t.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, 16)
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			key := fmt.Sprintf("k/%04d", i)
			_, err := c.S3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(key)})
			if err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("put s3://%s/%s: %w", bucket, key, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
