package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/toolkit/conn"
	"github.com/streamfold/streamfold/toolkit/emit"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCLI runs the CLI in-process with the given environment.
func runCLI(t testing.TB, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }, now: testclock.Now}
	code = run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name + ".golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/streamfold -update)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// localEnv is the environment of a CLI test against the local stack, with
// the tables of n.
func localEnv(n schema.Naming) map[string]string {
	return map[string]string{
		"STREAMFOLD_DYNAMODB_ENDPOINT": os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
		"STREAMFOLD_S3_ENDPOINT":       os.Getenv("STREAMFOLD_S3_ENDPOINT"),
		"STREAMFOLD_PREFIX":            n.Prefix,
		"STREAMFOLD_CATALOG":           testCatalogURI(n),
		"AWS_REGION":                   "us-east-1",
	}
}

// testCatalogURI is the archive catalog of a test's naming: an SQLite file
// of its own (prefixes are unique per test).
func testCatalogURI(n schema.Naming) string {
	return "sqlite:" + filepath.Join(os.TempDir(), "streamfold-cli-test-catalogs", n.Prefix+"-"+n.Stage+".db")
}

// openTestArchive opens the archive in bucket/archive the way the CLI does
// for localEnv(n): the same catalog and namespace.
func openTestArchive(t testing.TB, c *awsclient.Clients, n schema.Naming, bucket string) (*archiver.Archive, error) {
	t.Helper()
	a, err := archiver.New(c.S3, archiver.Config{Bucket: bucket, Prefix: "archive", Catalog: testCatalogURI(n), Namespace: conn.ArchiveNamespace(bucket, n)})
	if err == nil {
		t.Cleanup(func() { a.Close() })
	}
	return a, err
}

// appendSimulated appends a simulate workload of days days to n's event
// table, starting on the latest Monday at least days before the test clock's
// today (recent, and the same workload whatever day the test runs) and returns its events (producer redeliveries included) and what
// the append did.
func appendSimulated(t testing.TB, c *awsclient.Clients, n schema.Naming, seed int64, events, days int) ([]schema.Event, ingest.Result) {
	t.Helper()
	evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: events, Start: testclock.RecentMonday(days), Days: days})
	if err != nil {
		t.Fatal(err)
	}
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := app.Append(context.Background(), evs)
	if err != nil {
		t.Fatal(err)
	}
	return evs, res
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"no args is usage", nil, exitUsage, "Repairing: what could not be processed"},
		{"help", []string{"help"}, exitOK, "emit"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"emit -h", []string{"emit", "-h"}, exitOK, "Exit status: 0 nothing rejected"},
		{"simulate -h", []string{"simulate", "-h"}, exitOK, "deterministic workload"},
		{"run -h", []string{"run", "-h"}, exitOK, `"perRecord": {"write", "read", "dollarsPerMillion"}`},
		{"dev -h", []string{"dev", "-h"}, exitOK, "streamfold dev up"},
		{"dev unknown", []string{"dev", "sideways"}, exitUsage, `unknown subcommand "sideways"`},
		{"events -h", []string{"events", "-h"}, exitOK, "streamfold events summary"},
		{"emit bad flag", []string{"emit", "--nope"}, exitUsage, "streamfold emit: unknown flag --nope\nrun 'streamfold emit --help' for its flags\n"},
		{"query bad flag value", []string{"query", "jobs", "--installation", "abc"}, exitUsage, "run 'streamfold query jobs --help' for its flags"},
		{"simulate bad start", []string{"simulate", "--start", "yesterday"}, exitUsage, "--start: want YYYY-MM-DD"},
		{"simulate bad days", []string{"simulate", "--days", "400", "--out", "-"}, exitUsage, "--days: must be between 1 and 366"},
		{"emit bad stage", []string{"emit", "--stage", "qa"}, exitUsage, "Naming.Stage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, nil, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("output lacks %q:\n%s%s", tt.wantText, out, errOut)
			}
			// A bad flag names what is wrong; only -h prints the flags.
			if strings.Contains(tt.name, "bad flag") && strings.Contains(errOut, "Flags:") {
				t.Errorf("a usage error printed the whole help:\n%s", errOut)
			}
		})
	}
}

// TestEmitMixedFile appends a file of valid, duplicate, invalid, agent and
// non-agent lines to DynamoDB Local: exactly the new valid ones are written,
// each invalid line is reported by number with the field at fault, and a
// second run writes nothing.
func TestEmitMixedFile(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := map[string]string{
		"STREAMFOLD_DYNAMODB_ENDPOINT": os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
		"STREAMFOLD_PREFIX":            n.Prefix,
		"AWS_REGION":                   "us-east-1",
	}
	code, out, errOut := runCLI(t, env, "", "emit", "--quiet", "--sfn-tags", "testdata/sfn_tags.json", "testdata/emit_mixed.ndjson")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d (some lines rejected)\nstderr: %s", code, exitFailed, errOut)
	}
	golden(t, "emit_mixed_first", withoutCapacity(t, out))
	var sum struct{ Accepted, Duplicates, Skipped int }
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	scan, err := c.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(n.Table(schema.TableEvents)), Select: "COUNT"})
	if err != nil {
		t.Fatal(err)
	}
	if int(scan.Count) != sum.Accepted || sum.Accepted != 3 {
		t.Fatalf("event table holds %d items, emit accepted %d; want 3 and 3", scan.Count, sum.Accepted)
	}

	code, out, _ = runCLI(t, env, "", "emit", "--quiet", "--sfn-tags", "testdata/sfn_tags.json", "testdata/emit_mixed.ndjson")
	if code != exitFailed {
		t.Fatalf("second run exit %d, want %d", code, exitFailed)
	}
	golden(t, "emit_mixed_second", withoutCapacity(t, out))
}

// withoutCapacity checks the consumedCapacity of an emit summary and
// returns the summary without it, for a golden file that does not change
// when the event table's item size does: each accepted event cost at least
// one write unit on the event table, and each duplicate is a conditional
// put that failed.
func withoutCapacity(t *testing.T, out string) string {
	t.Helper()
	var sum emit.Result
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.EmitSummary == nil || sum.ConsumedCapacity == nil {
		t.Fatalf("emit summary without consumedCapacity (%v):\n%s", err, out)
	}
	cc := *sum.ConsumedCapacity
	if cc.Write < float64(sum.Accepted) || cc.ByTable["events"].Write != cc.Write || cc.Read != 0 || failedCalls(cc) != int64(sum.Duplicates) || cc.PerEvent == nil {
		t.Errorf("emit: %d accepted, %d duplicates, consumed %+v", sum.Accepted, sum.Duplicates, cc)
	}
	sum.ConsumedCapacity = nil
	var b bytes.Buffer
	if err := writeJSON(&b, sum); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestEmitAllValidExitsZero(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT"), "STREAMFOLD_PREFIX": n.Prefix}
	// The old, thin order: its 300 events hold redelivered webhooks, which
	// 3 seconds of the default time order seldom do.
	code, out, errOut := runCLI(t, env, "", "simulate", "--events", "300", "--order", "subject", "--out", "-", "--native")
	if code != exitOK {
		t.Fatalf("simulate exit %d: %s", code, errOut)
	}
	code, sumOut, errOut := runCLI(t, env, out, "emit", "--quiet", "-")
	if code != exitOK {
		t.Fatalf("emit exit %d: %s\n%s", code, errOut, sumOut)
	}
	var sum struct {
		Accepted, Duplicates int
		Rejected             []any
	}
	if err := json.Unmarshal([]byte(sumOut), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Accepted+sum.Duplicates != 300 || len(sum.Rejected) != 0 || sum.Duplicates == 0 {
		t.Fatalf("emit summary %s: want 300 lines accepted or duplicate (some duplicates), none rejected", sumOut)
	}
}
