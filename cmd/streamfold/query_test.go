package main

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/query/querytest"
)

// queryFixtureEnv loads querytest.Fixture into fresh tables once and
// returns the environment the CLI runs with.
var (
	queryFixtureOnce sync.Once
	queryFixture     map[string]string
	queryFixtureErr  error
)

func queryEnv(t *testing.T) map[string]string {
	t.Helper()
	c := testenv.Clients(t)
	queryFixtureOnce.Do(func() {
		n, _ := testenv.SharedTables(t, c)
		queryFixtureErr = querytest.Load(context.Background(), c.DynamoDB, n, querytest.Fixture(), querytest.FixtureRecordedAt)
		queryFixture = map[string]string{
			"STREAMFOLD_DYNAMODB_ENDPOINT": os.Getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
			"STREAMFOLD_PREFIX":            n.Prefix,
		}
	})
	if queryFixtureErr != nil {
		t.Fatalf("loading the fixture: %v", queryFixtureErr)
	}
	return queryFixture
}

// queryNow is the clock of the golden runs: the evening of the fixture's day.
const queryNow = "2030-01-15T20:00:00Z"

// TestQueryGolden runs every pattern on the fixture and compares the table
// output with testdata/query_*.golden (refresh with -update).
func TestQueryGolden(t *testing.T) {
	env := queryEnv(t)
	tests := []struct {
		name string
		args []string
	}{
		{"executions_agent", []string{"executions", "--agent", "my-agent", "--from", "2030-01-15T00:00:00Z", "--to", "2030-01-15T23:59:59Z", "--limit", "2"}},
		{"executions_status", []string{"executions", "--status", "succeeded"}},
		{"execution", []string{"execution", "arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:def456"}},
		{"workflow", []string{"workflow", "3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"}},
		{"running", []string{"running"}},
		{"tasks", []string{"tasks", "--workflow-type", "ldf"}},
		{"metrics_row", []string{"metrics", "--date", "2030-01-15", "--workflow-type", "sf"}},
		{"metrics_series", []string{"metrics", "--workflow-type", "step-functions", "--from", "2030-01-14", "--to", "2030-01-15"}},
		{"compare", []string{"compare", "--date", "2030-01-15"}},
		{"job", []string{"job", "--installation", "12345", "--job", "67890"}},
		{"jobs_stuck", []string{"jobs", "--installation", "12345", "--status", "in_progress", "--stuck-hours", "6"}},
		{"jobs_repo", []string{"jobs", "--installation", "12345", "--repo", "runs-on/test", "--since", "2030-01-15T00:00:00Z"}},
		{"run", []string{"run", "--installation", "12345", "--run", "54321"}},
		{"timeline", []string{"timeline", "--installation", "12345", "--job", "67895"}},
		{"duplicates", []string{"duplicates", "--installation", "12345", "--job", "67895"}},
		{"message", []string{"message", "7a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}},
		{"messages", []string{"messages", "--stage", "dev"}},
		{"message_stats", []string{"message-stats", "--hours", "24", "--now", "2030-10-22T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"query"}, tt.args...)
			if !slices.Contains(args, "--now") {
				args = append(args, "--now", queryNow)
			}
			code, out, errOut := runCLI(t, env, "", args...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			golden(t, "query_"+tt.name, out)
		})
	}
}

// TestQueryJSONAndPaging: --json output parses and equals the table's data;
// following "next" with --cursor walks the pages without repeats.
func TestQueryJSONAndPaging(t *testing.T) {
	env := queryEnv(t)
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		args := []string{"query", "executions", "--status", "SUCCEEDED", "--limit", "1", "--json"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		code, out, errOut := runCLI(t, env, "", args...)
		if code != exitOK {
			t.Fatalf("page %d: exit %d: %s", pages, code, errOut)
		}
		var page struct {
			Items []map[string]any `json:"items"`
			Next  string           `json:"next"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, out)
		}
		for _, it := range page.Items {
			seen = append(seen, it["executionArn"].(string))
		}
		if page.Next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("endless paging")
		}
		cursor = page.Next
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("SUCCEEDED executions over pages: %v, want the fixture's two", seen)
	}
	for _, args := range [][]string{
		{"query", "message-stats", "--stage", "dev", "--json", "--now", "2030-10-22T00:00:00Z"},
		{"query", "compare", "--date", "2030-01-15", "--json"},
		{"query", "timeline", "--installation", "12345", "--job", "67890", "--json"},
	} {
		code, out, errOut := runCLI(t, env, "", args...)
		var v map[string]any
		if code != exitOK || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("%v: exit %d, output not JSON: %s %s", args, code, out, errOut)
		}
	}
}

func TestQueryExitCodes(t *testing.T) {
	offline := map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": "http://127.0.0.1:1", "AWS_MAX_ATTEMPTS": "1"}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantText string
	}{
		{"help", nil, []string{"query", "-h"}, exitOK, "streamfold query jobs --installation 12345"},
		{"pattern help", nil, []string{"query", "jobs", "-h"}, exitOK, "-stuck-hours"},
		{"no pattern", nil, []string{"query"}, exitUsage, `expected one of "executions"`},
		{"unknown pattern", nil, []string{"query", "everything"}, exitUsage, `unknown subcommand "everything"`},
		{"missing argument", offline, []string{"query", "execution"}, exitUsage, `expected "<arn>"`},
		{"extra argument", offline, []string{"query", "running", "x"}, exitUsage, "unexpected argument x"},
		{"agent and status", offline, []string{"query", "executions", "--agent", "a", "--status", "FAILED"}, exitUsage, "--agent: give at most one of --agent or --status"},
		{"bad time", offline, []string{"query", "messages", "--stage", "dev", "--from", "monday"}, exitUsage, "--from: must be RFC3339"},
		{"bad now", offline, []string{"query", "message-stats", "--now", "later"}, exitUsage, "--now: must be RFC3339"},
		{"limit too big", offline, []string{"query", "messages", "--stage", "dev", "--limit", "1000"}, exitUsage, "--limit: must be between 1 and 200"},
		{"bad workflow type", offline, []string{"query", "running", "--workflow-type", "lambda"}, exitUsage, "--workflow-type: must be step-functions or durable-functions"},
		{"bad cursor", offline, []string{"query", "messages", "--stage", "dev", "--cursor", "Zm9v"}, exitUsage, "--cursor: not valid for this query"},
		{"short cursor key", offline, []string{"query", "running", "--cursor-key", "short"}, exitUsage, "query: --cursor-key: must be at least 16 bytes"},
		{"cursor against AWS without a key", map[string]string{}, []string{"query", "running", "--cursor", "abc"}, exitUsage, "query: --cursor-key: is needed to check a cursor"},
		{"job id zero", offline, []string{"query", "timeline", "--installation", "1"}, exitUsage, "query timeline: --job: must be a positive integer"},
		{"run id zero", offline, []string{"query", "run", "--installation", "1"}, exitUsage, "query run: --run: must be a positive integer"},
		{"empty ARN", offline, []string{"query", "execution", ""}, exitUsage, "query execution: ARN: is required"},
		{"jobs without installation", offline, []string{"query", "jobs", "--status", "queued"}, exitUsage, "--installation: is required"},
		{"unreachable", offline, []string{"query", "message", "x"}, exitRuntime, "query message:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.env, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("output lacks %q:\n%s%s", tt.wantText, out, errOut)
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		env := queryEnv(t)
		code, _, errOut := runCLI(t, env, "", "query", "job", "--installation", "12345", "--job", "1")
		if code != exitFailed || !strings.Contains(errOut, "not found: job 12345#1") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
}
