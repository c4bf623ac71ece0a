package maintenance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
)

func TestParseInvocation(t *testing.T) {
	tests := []struct {
		name, payload string
		want          Event
		ok            bool
		wantErr       string
	}{
		{"compact", `{"maintenance":{"task":"compact"}}`, Event{Task: "compact"}, true, ""},
		{"compact a date", `{"maintenance":{"task":"compact","date":"2026-11-20"}}`, Event{Task: "compact", Date: "2026-11-20"}, true, ""},
		{"verify", `{"maintenance":{"task":"verify"}}`, Event{Task: "verify"}, true, ""},
		{"stream batch", `{"Records":[]}`, Event{}, false, ""},
		{"not an object", `[1]`, Event{}, false, ""},
		{"no task", `{"maintenance":{}}`, Event{}, true, "maintenance: task is required ([compact verify])"},
		{"unknown task", `{"maintenance":{"task":"vacuum"}}`, Event{}, true, `maintenance: unknown task: task "vacuum" (want one of [compact verify])`},
		{"bad date", `{"maintenance":{"task":"compact","date":"20.11.2026"}}`, Event{}, true, `maintenance: date: must be YYYY-MM-DD, got "20.11.2026"`},
		{"date on verify", `{"maintenance":{"task":"verify","date":"2026-11-20"}}`, Event{}, true, `maintenance: date: only task "compact" takes a date, got "2026-11-20" for "verify"`},
		{"not an event", `{"maintenance":"compact"}`, Event{}, true, `maintenance: want {"maintenance": {"task": ...}}: json: cannot unmarshal string into Go value of type maintenance.Event`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ParseInvocation([]byte(tt.payload))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !ok {
					t.Fatalf("ok %v, error %v, want %q", ok, err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.ok || got != tt.want {
				t.Fatalf("got %+v, %v, %v; want %+v, %v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
	if _, _, err := ParseInvocation([]byte(`{"maintenance":{"task":"vacuum"}}`)); !errors.Is(err, ErrUnknownTask) {
		t.Fatalf("unknown task: %v does not wrap ErrUnknownTask", err)
	}
}

func TestEMFLine(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	b, err := emfLine(at, map[string]string{"Deployment": "streamfold-prod", "Task": "compact"}, MetricSucceeded, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Deployment":"streamfold-prod","MaintenanceSucceeded":1,"Task":"compact","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Deployment","Task"]],"Metrics":[{"Name":"MaintenanceSucceeded","Unit":"Count"}],"Namespace":"Streamfold"}],"Timestamp":1795489200000}}` + "\n"
	if string(b) != want {
		t.Fatalf("EMF line\n  %s\nwant\n  %s", b, want)
	}
}

type fakeCompactor struct {
	calls       []string
	err         error
	maintainErr map[string]error // by table
}

func (f *fakeCompactor) Compact(_ context.Context, table, date string, _ archiver.CompactOptions) (archiver.CompactStats, error) {
	f.calls = append(f.calls, table+" "+date)
	return archiver.CompactStats{Table: table, Date: date}, f.err
}

func (f *fakeCompactor) Maintain(_ context.Context, table string, _ archiver.MaintainOptions) (archiver.MaintainStats, error) {
	f.calls = append(f.calls, "maintain "+table)
	return archiver.MaintainStats{Table: table}, f.maintainErr[table]
}

// TestRunnerMaintainRefused: a table whose maintenance is refused (its
// history is shorter than its location's) fails the task with an error
// naming it and no success metric, after the other tables were maintained.
func TestRunnerMaintainRefused(t *testing.T) {
	refusal := &archiver.HistoryError{Table: "github_jobs", Location: "s3://bkt/archive/github_jobs", Reason: "41 orphan data files would be deleted"}
	c := &fakeCompactor{maintainErr: map[string]error{"github_jobs": refusal}}
	var metrics bytes.Buffer
	r, err := New(Config{Deployment: "sf-dev", Tables: []string{"github_jobs", "messages"}}, c, fakeVerifier{}, &metrics, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Now = func() time.Time { return time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC) }
	res, err := r.Run(context.Background(), Event{Task: TaskCompact})
	if !errors.Is(err, archiver.ErrShortHistory) || !strings.Contains(err.Error(), "maintain github_jobs") || !strings.Contains(err.Error(), "s3://bkt/archive/github_jobs") {
		t.Fatalf("refused maintenance: %v, want ErrShortHistory naming the table and location", err)
	}
	if !slices.Contains(c.calls, "maintain messages") || len(res.Maintained) != 1 || res.Maintained[0].Table != "messages" {
		t.Errorf("the other table was not maintained: calls %v, maintained %+v", c.calls, res.Maintained)
	}
	if metrics.Len() != 0 {
		t.Errorf("a success metric for a failed task: %q", metrics.String())
	}
}

type fakeVerifier struct {
	diffs int
	err   error
}

func (f fakeVerifier) Verify(context.Context) (rebuild.Report, error) {
	return rebuild.Report{Differences: make([]rebuild.Difference, f.diffs)}, f.err
}

// TestRunnerDates: compact works on the day before yesterday (UTC), or the
// event's date; every table; a failure is an error and no success metric.
func TestRunnerDates(t *testing.T) {
	for _, tt := range []struct {
		now       time.Time
		date      string
		wantDate  string
		daysAgo   int
		compactEr error
	}{
		{time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC), "", "2026-11-22", 0, nil},
		{time.Date(2026, 3, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), "", "2026-02-26", 0, nil}, // 2026-02-28 23:30 UTC
		{time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC), "", "2026-11-21", 3, nil},
		{time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC), "2026-01-05", "2026-01-05", 0, nil},
		{time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC), "", "2026-11-22", 0, archiver.ErrCompactionConflict},
	} {
		c := &fakeCompactor{err: tt.compactEr}
		var metrics bytes.Buffer
		r, err := New(Config{Deployment: "sf-dev", DaysAgo: tt.daysAgo, Tables: []string{"github_jobs", "messages"}}, c, fakeVerifier{}, &metrics, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Now = func() time.Time { return tt.now }
		res, err := r.Run(context.Background(), Event{Task: TaskCompact, Date: tt.date})
		if tt.compactEr != nil {
			if !errors.Is(err, tt.compactEr) || metrics.Len() != 0 {
				t.Errorf("failing compaction: error %v, metrics %q", err, metrics.String())
			}
			continue
		}
		if err != nil || res.Date != tt.wantDate || strings.Join(c.calls, ",") != "github_jobs "+tt.wantDate+",messages "+tt.wantDate+",maintain github_jobs,maintain messages" {
			t.Errorf("now %s: date %q, calls %v, %v; want %s", tt.now, res.Date, c.calls, err, tt.wantDate)
		}
		if !strings.Contains(metrics.String(), `"MaintenanceSucceeded":1,"Task":"compact"`) {
			t.Errorf("no success metric: %q", metrics.String())
		}
	}
}

func TestRunnerVerifyMetric(t *testing.T) {
	var metrics bytes.Buffer
	r, err := New(Config{Deployment: "sf-dev"}, &fakeCompactor{}, fakeVerifier{diffs: 3}, &metrics, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), Event{Task: TaskVerify})
	if err != nil || res.Differences == nil || *res.Differences != 3 {
		t.Fatalf("result %+v, %v", res, err)
	}
	lines := strings.Split(strings.TrimSpace(metrics.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"VerifyDifferences":3`) || !strings.Contains(lines[1], `"MaintenanceSucceeded":1,"Task":"verify"`) {
		t.Fatalf("metrics %q", lines)
	}
	metrics.Reset()
	r2, _ := New(Config{Deployment: "sf-dev"}, &fakeCompactor{}, fakeVerifier{err: errors.New("table gone")}, &metrics, nil)
	if _, err := r2.Run(context.Background(), Event{Task: TaskVerify}); err == nil || err.Error() != "maintenance: verify: table gone" || metrics.Len() != 0 {
		t.Fatalf("failing verify: %v, metrics %q", err, metrics.String())
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "maintenance: Config.Deployment is required"},
		{Config{Deployment: "x", DaysAgo: -1}, "maintenance: Config.DaysAgo: must be at least 1 (today is still being written), got -1"},
		{Config{Deployment: "x", Tables: []string{"jobs"}}, `maintenance: Config.Tables: unknown table "jobs"`},
	} {
		if _, err := New(tt.cfg, &fakeCompactor{}, fakeVerifier{}, &bytes.Buffer{}, nil); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// TestDispatch: a maintenance event goes to the runner, a stream batch to
// the stream handler, anything else is an error naming both shapes.
func TestDispatch(t *testing.T) {
	var metrics bytes.Buffer
	r, _ := New(Config{Deployment: "sf-dev"}, &fakeCompactor{}, fakeVerifier{}, &metrics, nil)
	streamed := 0
	h := Dispatch(func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		streamed += len(ev.Records)
		return events.DynamoDBEventResponse{}, nil
	}, r)
	ctx := context.Background()
	if out, err := h(ctx, json.RawMessage(`{"maintenance":{"task":"verify"}}`)); err != nil || out.(Result).Task != "verify" || streamed != 0 {
		t.Fatalf("maintenance: %+v, %v", out, err)
	}
	if _, err := h(ctx, json.RawMessage(`{"Records":[{"eventName":"INSERT","dynamodb":{"SequenceNumber":"1"}}]}`)); err != nil || streamed != 1 {
		t.Fatalf("stream: %v, %d records", err, streamed)
	}
	if _, err := h(ctx, json.RawMessage(`{"detail-type":"Scheduled Event"}`)); err == nil || !strings.Contains(err.Error(), "neither a DynamoDB stream event") {
		t.Fatalf("other payload: %v", err)
	}
}
