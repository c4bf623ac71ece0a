// Package testenv connects integration tests to the local services.
//
// A test that needs DynamoDB Local or MinIO calls Clients(t) or
// S3Clients(t). When STREAMFOLD_DYNAMODB_ENDPOINT (or STREAMFOLD_S3_ENDPOINT)
// is unset the test is skipped with a message saying how to run it; when
// STREAMFOLD_REQUIRE_SERVICES=1 (as `make test` sets it) a missing or
// unreachable service fails the test instead.
//
// What a helper creates (tables, buckets) is removed when the test ends,
// except SharedTables, whose tables outlive the test on purpose.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// Required reports whether the services must be there.
func Required() bool { return os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" }

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (start them with `streamfold dev up` and export the endpoints, or run `make test`)", args...)
}

// Clients returns SDK clients for the local endpoints, skipping or failing
// the test when DynamoDB Local is not configured or does not answer.
func Clients(t testing.TB) *awsclient.Clients {
	t.Helper()
	ddb := os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT")
	if ddb == "" {
		unavailable(t, "STREAMFOLD_DYNAMODB_ENDPOINT is not set: integration test needs DynamoDB Local")
	}
	c, err := awsclient.New(context.Background(), awsclient.Config{
		Region:           "us-east-1",
		DynamoDBEndpoint: ddb,
		S3Endpoint:       os.Getenv("STREAMFOLD_S3_ENDPOINT"),
		S3AccessKey:      envOr("STREAMFOLD_S3_ACCESS_KEY", "streamfold"),
		S3SecretKey:      envOr("STREAMFOLD_S3_SECRET_KEY", "streamfold-secret"),
	})
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.DynamoDB.ListTables(ctx, nil); err != nil {
		unavailable(t, "DynamoDB Local at %s does not answer: %v", ddb, err)
	}
	return c
}

// S3Clients is Clients that also requires STREAMFOLD_S3_ENDPOINT.
func S3Clients(t testing.TB) *awsclient.Clients {
	t.Helper()
	if os.Getenv("STREAMFOLD_S3_ENDPOINT") == "" {
		unavailable(t, "STREAMFOLD_S3_ENDPOINT is not set: integration test needs MinIO")
	}
	return Clients(t)
}

// Tables creates a fresh set of every streamfold table under a unique prefix
// and returns its naming. The tables are deleted when the test ends (best
// effort): DynamoDB Local slows down as tables and items pile up.
func Tables(t testing.TB, c *awsclient.Clients) (schema.Naming, []provision.Result) {
	t.Helper()
	return tables(t, c)
}

func tables(t testing.TB, c *awsclient.Clients) (schema.Naming, []provision.Result) {
	t.Helper()
	n, res := sharedTables(t, c)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, spec := range schema.Tables() {
			_, _ = c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(n.Table(spec.Logical))})
		}
	})
	return n, res
}

// SharedTables is Tables for a fixture several tests share (loaded once per
// test binary): the tables outlive the test that created them and are left
// behind (DynamoDB Local runs in memory).
func SharedTables(t testing.TB, c *awsclient.Clients) (schema.Naming, []provision.Result) {
	t.Helper()
	return sharedTables(t, c)
}

func sharedTables(t testing.TB, c *awsclient.Clients) (schema.Naming, []provision.Result) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := schema.Naming{Prefix: "t" + hex.EncodeToString(b[:]), Stage: "dev"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := provision.Ensure(ctx, c.DynamoDB, n)
	if err != nil {
		t.Fatalf("testenv: create tables: %v", err)
	}
	return n, res
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// QuietLog is a logger for the components under test that writes errors
// only, to stderr.
func QuietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
