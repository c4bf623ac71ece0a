package archiver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newBucket creates a bucket with a random name on the local MinIO (the
// test skips without it) and removes its objects and itself at the end.
func newBucket(t testing.TB) (*awsclient.Clients, string) {
	t.Helper()
	c := testenv.S3Clients(t)
	return c, testenv.Bucket(t, c, "")
}

// newArchive opens an archive; without a Config.Catalog it uses the test's
// SQLite catalog of that bucket and prefix (testCatalog), so that several
// archives of one test (crashed and restarted writers, concurrent
// committers) share their tables. It is closed at the test's end.
func newArchive(t testing.TB, api archiver.S3API, cfg archiver.Config) *archiver.Archive {
	t.Helper()
	if cfg.Catalog == "" {
		cfg.Catalog = testCatalog(t, cfg.Bucket, cfg.Prefix)
	}
	a, err := archiver.New(api, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

var testCatalogs sync.Map // top-level test | bucket | prefix -> catalog URI

// testCatalog returns the SQLite catalog of one top-level test's archive
// (bucket and prefix), created in a temporary directory on first use.
func testCatalog(t testing.TB, bucket, prefix string) string {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	key := top + "|" + bucket + "|" + prefix
	if uri, ok := testCatalogs.Load(key); ok {
		return uri.(string)
	}
	dir, err := os.MkdirTemp("", "streamfold-catalog-")
	if err != nil {
		t.Fatal(err)
	}
	uri, _ := testCatalogs.LoadOrStore(key, "sqlite:"+filepath.Join(dir, "catalog.db"))
	return uri.(string)
}

// errInjected is the failure faultS3 injects.
var errInjected = errors.New("injected S3 failure")

// faultS3 wraps an S3API and fails mutating calls (PutObject, DeleteObject)
// on demand: after `budget` more successful mutations every mutation fails
// (a crash: nothing after that point happens), or when fail says so.
type faultS3 struct {
	archiver.S3API
	mu        sync.Mutex
	budget    int // mutations allowed before the crash; < 0: unlimited
	mutations atomic.Int64
	fail      func(op, key string) bool
}

func newFaultS3(api archiver.S3API) *faultS3 { return &faultS3{S3API: api, budget: -1} }

// crashAfter lets n more mutations through, then fails all of them.
func (f *faultS3) crashAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.budget = n
}

func (f *faultS3) heal() { f.crashAfter(-1); f.setFail(nil) }

func (f *faultS3) setFail(fn func(op, key string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fn
}

func (f *faultS3) mutate(op, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil && f.fail(op, key) {
		return fmt.Errorf("%s %s: %w", op, key, errInjected)
	}
	if f.budget == 0 {
		return fmt.Errorf("%s %s: %w (crashed)", op, key, errInjected)
	}
	if f.budget > 0 {
		f.budget--
	}
	f.mutations.Add(1)
	return nil
}

func (f *faultS3) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := f.mutate("PutObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return f.S3API.PutObject(ctx, in, o...)
}

func (f *faultS3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, o ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := f.mutate("DeleteObject", aws.ToString(in.Key)); err != nil {
		return nil, err
	}
	return f.S3API.DeleteObject(ctx, in, o...)
}

var _ = types.NoSuchKey{}
