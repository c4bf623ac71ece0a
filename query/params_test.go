package query

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no key", Config{}, "query: Config.CursorKey: must be at least 16 bytes, got 0"},
		{"short key", Config{CursorKey: []byte("short")}, "query: Config.CursorKey: must be at least 16 bytes, got 5"},
		{"page above max", Config{CursorKey: testKey, DefaultPageSize: 300}, "query: Config.DefaultPageSize: must be between 1 and MaxPageSize (200), got 300"},
		{"max too big", Config{CursorKey: testKey, MaxPageSize: 5000}, "query: Config.MaxPageSize: must be between 1 and 1000, got 5000"},
		{"ok", Config{CursorKey: testKey}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(&fakeAPI{}, testNaming, tt.cfg)
			if got := errText(err); got != tt.want {
				t.Fatalf("err %q, want %q", got, tt.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestInvalidParameters: every pattern names its bad parameter, wraps
// ErrInvalid, and sends nothing to DynamoDB.
func TestInvalidParameters(t *testing.T) {
	f := &fakeAPI{}
	c := newTestClient(t, f, testKey)
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, param, reason string
		call                func() error
	}{
		{"limit too big", "limit", "must be between 1 and 200", func() error {
			_, err := c.ExecutionsByAgent(ctx, "a", TimeRange{}, PageRequest{Limit: 201})
			return err
		}},
		{"negative limit", "limit", "must be between 1 and 200", func() error {
			_, err := c.Messages(ctx, MessageFilter{Stage: "dev"}, PageRequest{Limit: -1})
			return err
		}},
		{"no agent", "agent", "is required", func() error {
			_, err := c.ExecutionsByAgent(ctx, "", TimeRange{}, PageRequest{})
			return err
		}},
		{"range backwards", "from", "must not be after to", func() error {
			_, err := c.ExecutionsByAgent(ctx, "a", TimeRange{From: t0.Add(time.Hour), To: t0}, PageRequest{})
			return err
		}},
		{"unknown execution status", "status", `must be one of RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, got "DONE"`, func() error {
			_, err := c.ExecutionsByStatus(ctx, "done", TimeRange{}, PageRequest{})
			return err
		}},
		{"unknown workflow type", "workflowType", `must be step-functions or durable-functions (or sf, ldf), got "lambda"`, func() error {
			_, err := c.RunningExecutions(ctx, "lambda", PageRequest{})
			return err
		}},
		{"bad date", "date", `must be a date YYYY-MM-DD, got "05/01/2026"`, func() error {
			_, err := c.CompareMetrics(ctx, "05/01/2026")
			return err
		}},
		{"metrics without type", "workflowType", "is required", func() error {
			_, err := c.Metrics(ctx, "2026-01-05", "")
			return err
		}},
		{"job id zero", "id", "must be a positive integer", func() error {
			_, err := c.Job(ctx, 1, 0)
			return err
		}},
		{"negative installation", "installation", "must be a non-negative integer", func() error {
			_, err := c.JobsByStatus(ctx, -1, "queued", time.Time{}, PageRequest{})
			return err
		}},
		{"unknown job status", "status", `must be one of queued, waiting, scheduled, in_progress, completed, got "running"`, func() error {
			_, err := c.JobsByStatus(ctx, 1, "running", time.Time{}, PageRequest{})
			return err
		}},
		{"stuck without hours", "stuckHours", "must be positive", func() error {
			_, err := c.StuckJobs(ctx, 1, 0, t0, PageRequest{})
			return err
		}},
		{"repo missing", "repo", "is required", func() error {
			_, err := c.RepoJobs(ctx, 1, "", t0, PageRequest{})
			return err
		}},
		{"run attempt zero", "attempt", "must be a positive integer", func() error {
			_, err := c.Run(ctx, 1, 2, 0)
			return err
		}},
		{"messages without filter", "stage", "one of stage, status or type is required", func() error {
			_, err := c.Messages(ctx, MessageFilter{}, PageRequest{})
			return err
		}},
		{"unknown stage", "stage", `must be one of dev, stage, prod, got "qa"`, func() error {
			_, err := c.Messages(ctx, MessageFilter{Stage: "qa"}, PageRequest{})
			return err
		}},
		{"stats window too long", "hours", "the window must be at most 744 hours", func() error {
			_, err := c.MessageStats(ctx, "dev", t0, t0.Add(800*time.Hour))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var pe *ParamError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a *ParamError wrapping ErrInvalid", err)
			}
			if pe.Param != tt.param || pe.Reason != tt.reason {
				t.Fatalf("param %q reason %q, want %q %q", pe.Param, pe.Reason, tt.param, tt.reason)
			}
		})
	}
	if len(f.queries)+len(f.gets) != 0 {
		t.Fatalf("invalid requests reached DynamoDB: %d queries, %d gets", len(f.queries), len(f.gets))
	}
}

// TestQueryShapes pins the requests the patterns send: the index, the key
// condition (never a scan), the order and the limit.
func TestQueryShapes(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	S := func(s string) types.AttributeValue { return avS(s) }
	N := func(n int64) types.AttributeValue { return avN(n) }
	tests := []struct {
		name    string
		call    func(c *Client) error
		table   string
		index   string
		key     string
		filter  string
		names   map[string]string
		values  map[string]types.AttributeValue
		forward bool
	}{
		{"executions by agent", func(c *Client) error {
			_, err := c.ExecutionsByAgent(ctx, "research-agent", TimeRange{From: t0, To: t0.Add(24*time.Hour - time.Millisecond)}, PageRequest{Limit: 5})
			return err
		}, "unit-dev-executions", "AgentDateIndex", "#k0 = :v0 AND #k1 BETWEEN :v1 AND :v2", "",
			map[string]string{"#k0": "agentName", "#k1": "startDate"},
			map[string]types.AttributeValue{":v0": S("research-agent"), ":v1": S("2026-01-05T00:00:00.000Z"), ":v2": S("2026-01-05T23:59:59.999Z")}, false},
		{"stuck jobs", func(c *Client) error {
			_, err := c.StuckJobs(ctx, 12345, 6*time.Hour, t0, PageRequest{Limit: 5})
			return err
		}, "unit-dev-workflow-jobs", "GSI1", "#k0 = :v0 AND #k1 = :v1 AND #k2 < :v2", "",
			map[string]string{"#k0": "installation_id", "#k1": "status", "#k2": "created_at"},
			map[string]types.AttributeValue{":v0": N(12345), ":v1": S("in_progress"), ":v2": S("2026-01-04T18:00:00.000Z")}, false},
		{"pending tasks", func(c *Client) error {
			_, err := c.PendingTasks(ctx, "sf", PageRequest{Limit: 5})
			return err
		}, "unit-dev-workflows", "GSI1", "#k0 = :v0 AND #k1 = :v1 AND #k2 = :v2", "",
			map[string]string{"#k0": "workflowType", "#k1": "entityType", "#k2": "status"},
			map[string]types.AttributeValue{":v0": S("step-functions"), ":v1": S("task"), ":v2": S("pending")}, false},
		{"messages by status filtered by stage", func(c *Client) error {
			_, err := c.Messages(ctx, MessageFilter{Stage: "dev", Status: "completed", Created: TimeRange{From: t0}}, PageRequest{Limit: 5})
			return err
		}, "unit-dev-messages", "status-created_date-index", "#k0 = :v0 AND #k1 >= :v1", "#k2 = :v2",
			map[string]string{"#k0": "status", "#k1": "created_date", "#k2": "stage"},
			map[string]types.AttributeValue{":v0": S("completed"), ":v1": S("2026-01-05T00:00:00.000Z"), ":v2": S("dev")}, false},
		{"timeline", func(c *Client) error {
			_, err := c.Timeline(ctx, 0, 42)
			return err
		}, "unit-dev-events", "", "#k0 = :v0", "",
			map[string]string{"#k0": "subject"}, map[string]types.AttributeValue{":v0": S("github/0/job/42")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeAPI{}
			c := newTestClient(t, f, testKey)
			if err := tt.call(c); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			if len(f.queries) != 1 {
				t.Fatalf("%d queries, want 1", len(f.queries))
			}
			q := f.queries[0]
			if aws.ToString(q.TableName) != tt.table || aws.ToString(q.IndexName) != tt.index || aws.ToString(q.KeyConditionExpression) != tt.key ||
				aws.ToString(q.FilterExpression) != tt.filter || aws.ToBool(q.ScanIndexForward) != tt.forward {
				t.Fatalf("query %s/%s key %q filter %q forward %v", aws.ToString(q.TableName), aws.ToString(q.IndexName),
					aws.ToString(q.KeyConditionExpression), aws.ToString(q.FilterExpression), aws.ToBool(q.ScanIndexForward))
			}
			if !reflect.DeepEqual(q.ExpressionAttributeNames, tt.names) || canonJSON(Plain(q.ExpressionAttributeValues)) != canonJSON(Plain(tt.values)) {
				t.Fatalf("names %v values %v", q.ExpressionAttributeNames, Plain(q.ExpressionAttributeValues))
			}
			if tt.index != "" && aws.ToInt32(q.Limit) != 5 {
				t.Fatalf("limit %v, want 5", q.Limit)
			}
		})
	}
}

func TestPlain(t *testing.T) {
	item := map[string]types.AttributeValue{
		"s": avS("x"), "n": &types.AttributeValueMemberN{Value: "0.006000"}, "b": &types.AttributeValueMemberBOOL{Value: true},
		"null": &types.AttributeValueMemberNULL{Value: true},
		"l":    &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("a"), avN(2)}},
		"m":    &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": avN(0)}},
		"ss":   &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
	}
	got, err := json.Marshal(Plain(item))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"l":["a",2],"m":{"x":0},"n":0.006000,"ns":[1,2.5],"null":null,"s":"x","ss":["b","a"]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if Plain(nil) != nil {
		t.Fatal("Plain(nil) is not nil")
	}
}

// TestTimelineNeedsJobFold: without Config.JobFold the timeline is refused
// with ErrNoJobFold before any read; its parameters are still checked first.
func TestTimelineNeedsJobFold(t *testing.T) {
	ctx := t.Context()
	f := &fakeAPI{}
	c, err := New(f, testNaming, Config{CursorKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Timeline(ctx, 1, 42); !errors.Is(err, ErrNoJobFold) {
		t.Fatalf("Timeline without JobFold: err = %v, want ErrNoJobFold", err)
	}
	if _, err := c.Timeline(ctx, 1, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Timeline(job 0) without JobFold: err = %v, want ErrInvalid", err)
	}
	if len(f.queries) != 0 {
		t.Fatalf("%d queries sent, want none", len(f.queries))
	}
}
