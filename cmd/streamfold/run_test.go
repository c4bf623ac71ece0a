package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/conn"
	"github.com/streamfold/streamfold/toolkit/localrun"
)

// runSummary is run's --json summary.
type runSummary = localrun.Result

// runCLIWithin is runCLI that gives up after d (its context ends).
func runCLIWithin(t *testing.T, d time.Duration, env map[string]string, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	e := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	start := time.Now()
	code = run(ctx, e, args)
	return code, out.String(), errb.String(), time.Since(start)
}

// appendDay appends a simulated workload of one fixed day to n's event
// table (no wall clock: the archive partitions by the events' own time).
func appendDay(t *testing.T, c *awsclient.Clients, n schema.Naming, seed int64, day time.Time) {
	t.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: 60, Start: day, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Append(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// putPoison appends an item of a type no consumer knows: poison to both.
func putPoison(t *testing.T, c *awsclient.Clients, n schema.Naming, id string) {
	t.Helper()
	if _, err := c.DynamoDB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(n.Table(schema.TableEvents)), Item: map[string]types.AttributeValue{
		"subject": &types.AttributeValueMemberS{Value: "x/" + id}, "id": &types.AttributeValueMemberS{Value: id},
		"type": &types.AttributeValueMemberS{Value: "no.such.type"}, "time": &types.AttributeValueMemberS{Value: "2026-01-05T10:00:00Z"},
	}}); err != nil {
		t.Fatal(err)
	}
}

// TestRunSummaryCountsQuarantined: run's summary says how many records
// each consumer quarantined, poison records included (the projector's in
// the dead-letter table, the archiver's under errors/), not only those
// that exhausted their retries.
func TestRunSummaryCountsQuarantined(t *testing.T) {
	c := testenv.S3Clients(t)
	n, _ := testenv.Tables(t, c)
	testenv.Bucket(t, c, n.BucketName())
	env := localEnv(n)
	appendDay(t, c, n, 5, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	putPoison(t, c, n, "poison-1")
	putPoison(t, c, n, "poison-2")
	code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	// The local runner hands the archiver each record's eventID (it names
	// the batch files and fills stream_event_id).
	a, err := openTestArchive(t, c, n, n.BucketName())
	if err != nil {
		t.Fatal(err)
	}
	archived := 0
	if err := a.Scan(context.Background(), func(r archiver.Record) error {
		archived++
		if r.StreamEventID == "" {
			t.Errorf("event %s archived without its stream eventID", r.Event.ID)
		}
		return nil
	}); err != nil || archived == 0 {
		t.Fatalf("scan: %d records, %v", archived, err)
	}
	for _, consumer := range []string{"projector", "archiver"} {
		re := regexp.MustCompile(`(?m)^` + consumer + ` +\d+ records in \d+ batches, \d+ retries, (\d+) dead-lettered`)
		m := re.FindStringSubmatch(out)
		if m == nil || m[1] != "2" {
			t.Errorf("%s: summary says %v dead-lettered, want the 2 poison records:\n%s", consumer, m, out)
		}
	}
}

// TestRunStopsWhenTheArchiveIsGone: when the archive's catalog points at
// table metadata that no longer exists, or its bucket is gone, run stops
// within a bounded time with exit code 3 and a message naming the table
// and what is missing, instead of retrying forever.
func TestRunStopsWhenTheArchiveIsGone(t *testing.T) {
	cases := []struct {
		name   string
		remove func(t *testing.T, c *awsclient.Clients, bucket string)
		want   func(bucket string) string // what the message must say is missing
	}{
		{"metadata deleted", func(t *testing.T, c *awsclient.Clients, bucket string) {
			removeObjects(t, c, bucket, func(key string) bool { return strings.Contains(key, "/metadata/") })
		}, func(bucket string) string {
			return `s3://` + regexp.QuoteMeta(bucket) + `/archive/\w+/metadata/[^ ]+\.metadata\.json does not exist`
		}},
		{"bucket deleted", func(t *testing.T, c *awsclient.Clients, bucket string) {
			removeObjects(t, c, bucket, func(string) bool { return true })
			if _, err := c.S3.DeleteBucket(context.Background(), &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
				t.Fatal(err)
			}
		}, func(bucket string) string { return `s3://` + regexp.QuoteMeta(bucket) + ` does not exist` }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testenv.S3Clients(t)
			n, _ := testenv.Tables(t, c)
			bucket := testenv.Bucket(t, c, n.BucketName())
			env := localEnv(n)
			appendDay(t, c, n, 5, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
			if code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s"); code != exitOK {
				t.Fatalf("first run exit %d\n%s\n%s", code, out, errOut)
			}
			tc.remove(t, c, bucket)
			appendDay(t, c, n, 6, time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC))
			code, out, errOut, took := runCLIWithin(t, 2*time.Minute, env, "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s")
			want := regexp.MustCompile(`streamfold: run: archiver: .*table ` + regexp.QuoteMeta(conn.ArchiveNamespace(bucket, n)) + `\.\w+: ` + tc.want(bucket))
			if code != exitRuntime || !want.MatchString(errOut) {
				t.Fatalf("run after the archive went: exit %d after %s, want %d and a message matching %s\nstdout:\n%s\nstderr:\n%s",
					code, took.Round(time.Millisecond), exitRuntime, want, out, errOut)
			}
			t.Logf("stopped after %s: %s", took.Round(time.Millisecond), errOut[strings.LastIndex(errOut, "streamfold: run:"):])
		})
	}
}

// removeObjects deletes the objects of bucket whose keys match.
func removeObjects(t *testing.T, c *awsclient.Clients, bucket string, match func(key string) bool) {
	t.Helper()
	ctx := context.Background()
	p := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			if !match(aws.ToString(o.Key)) {
				continue
			}
			if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key}); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal(fmt.Sprintf("no object of %s to delete", bucket))
	}
}
