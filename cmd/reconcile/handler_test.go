package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

var clock = time.Date(2026, 3, 10, 5, 30, 0, 0, time.UTC)

// fakeRun records the windows it is asked to check and answers res, err.
type fakeRun struct {
	calls []window
	res   opsrec.Result
	err   error
}

func (f *fakeRun) run(_ context.Context, w window) (opsrec.Result, error) {
	f.calls = append(f.calls, w)
	r := f.res
	r.From, r.To, r.Heal = w.From, w.To, w.Heal
	if r.To.IsZero() {
		r.To = clock // as package reconcile would (less its settle time)
	}
	return r, f.err
}

func newTestHandler(heal bool, f *fakeRun, metrics, logs io.Writer) *handler {
	s := settings{naming: schema.Naming{Prefix: "sf", Stage: "prod"}, window: DefaultWindow, heal: heal}
	return &handler{run: f.run, settings: s, metrics: metrics, log: slog.New(slog.NewJSONHandler(logs, nil)),
		now: func() time.Time { return clock }, deployment: s.deployment()}
}

func TestHandleWindow(t *testing.T) {
	day := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	tests := []struct {
		name    string
		heal    bool // RECONCILE_HEAL
		payload string
		want    window
	}{
		{"empty payload: the default window", false, ``, window{From: clock.Add(-26 * time.Hour)}},
		{"null payload", false, `null`, window{From: clock.Add(-26 * time.Hour)}},
		{"scheduler input", false, `{"since":"24h","heal":false}`, window{From: clock.Add(-24 * time.Hour)}},
		{"since", false, `{"since":"72h"}`, window{From: clock.Add(-72 * time.Hour)}},
		{"since before to", false, `{"since":"48h","to":"2026-03-02T00:00:00Z"}`, window{From: day("2026-02-28T00:00:00Z"), To: day("2026-03-02T00:00:00Z")}},
		{"fixed window", false, `{"from":"2026-03-01T00:00:00Z","to":"2026-03-02T00:00:00Z"}`, window{From: day("2026-03-01T00:00:00Z"), To: day("2026-03-02T00:00:00Z")}},
		{"from with an offset, to now", false, `{"from":"2026-03-09T02:00:00+02:00"}`, window{From: day("2026-03-09T00:00:00Z")}},
		{"heal by default", true, `{}`, window{From: clock.Add(-26 * time.Hour), Heal: true}},
		{"heal asked and allowed", true, `{"heal":true}`, window{From: clock.Add(-26 * time.Hour), Heal: true}},
		{"false overrides a true default", true, `{"heal":false}`, window{From: clock.Add(-26 * time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRun{}
			var metrics, logs bytes.Buffer
			res, err := newTestHandler(tt.heal, f, &metrics, &logs).Handle(context.Background(), json.RawMessage(tt.payload))
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if len(f.calls) != 1 || f.calls[0] != tt.want {
				t.Fatalf("runs %+v, want one of %+v", f.calls, tt.want)
			}
			if res.Gaps != 0 || !res.From.Equal(tt.want.From) || res.Heal != tt.want.Heal {
				t.Errorf("response %+v", res)
			}
		})
	}
}

func TestHandleRefuses(t *testing.T) {
	tests := []struct {
		name    string
		heal    bool
		payload string
		want    string
	}{
		{"heal not allowed", false, `{"heal":true}`, "heal is disabled in this deployment (RECONCILE_HEAL=false"},
		{"misspelt field", false, `{"sinse":"24h"}`, `json: unknown field "sinse"`},
		{"not an object", false, `"24h"`, "cannot unmarshal string"},
		{"since and from", false, `{"since":"24h","from":"2026-03-01T00:00:00Z"}`, "since and from are exclusive"},
		{"days are not a Go duration", false, `{"since":"2d"}`, `since "2d": want a positive duration such as 26h`},
		{"negative since", false, `{"since":"-1h"}`, `since "-1h": want a positive duration`},
		{"bad from", false, `{"from":"yesterday"}`, `from "yesterday": want RFC 3339`},
		{"bad to", false, `{"to":"2026-03-01"}`, `to "2026-03-01": want RFC 3339`},
		{"empty window", false, `{"from":"2026-03-02T00:00:00Z","to":"2026-03-02T00:00:00Z"}`, "from 2026-03-02T00:00:00Z is not before to 2026-03-02T00:00:00Z"},
		{"from after now", false, `{"from":"2026-03-11T00:00:00Z"}`, "from 2026-03-11T00:00:00Z is not before to 2026-03-10T05:30:00Z"},
		{"from after to", false, `{"from":"2026-03-02T00:00:00Z","to":"2026-03-01T00:00:00Z"}`, "from 2026-03-02T00:00:00Z is not before to 2026-03-01T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRun{}
			var metrics, logs bytes.Buffer
			_, err := newTestHandler(tt.heal, f, &metrics, &logs).Handle(context.Background(), json.RawMessage(tt.payload))
			if !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want ErrRequest with %q", err, tt.want)
			}
			if len(f.calls) != 0 || metrics.Len() != 0 {
				t.Errorf("a refused request ran (%d runs) or wrote metrics (%q)", len(f.calls), metrics.String())
			}
		})
	}
}

// TestHandleGaps: gaps are a result (metrics, log lines, response), not a
// function error.
func TestHandleGaps(t *testing.T) {
	f := &fakeRun{res: opsrec.Result{Events: 1200, ReadUnits: 150.5, WriteUnits: 3, S3Requests: 40, Rows: []opsrec.DayGaps{
		{Domain: "github", Day: "2026-03-09", Events: 700, MissingProjection: 2, MissingArchive: 1, Healed: 3,
			IDs: map[string][]string{"projection": {"e1", "e2"}, "archive": {"e3"}}},
		{Domain: "messages", Day: "2026-03-09", Events: 500, Conflicts: 1, DeadLettered: 4, IDs: map[string][]string{"conflict": {"m7"}}},
		{Domain: "messages", Day: "2026-03-10", Events: 0, ArchiveOnly: 9},
	}}}
	var metrics, logs bytes.Buffer
	res, err := newTestHandler(true, f, &metrics, &logs).Handle(context.Background(), json.RawMessage(`{"since":"24h","heal":true}`))
	if err != nil {
		t.Fatalf("gaps made the function fail: %v", err)
	}
	if res.Gaps != 4 || res.Events != 1200 || len(res.Rows) != 3 {
		t.Errorf("response %+v, want 4 gaps over 1200 events in 3 rows", res)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(metrics.String()), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		if doc["Deployment"] != "sf-prod" || doc["From"] != "2026-03-09T05:30:00Z" || doc["To"] != "2026-03-10T05:30:00Z" || doc["Heal"] != "true" {
			t.Errorf("metric line %s: want Deployment sf-prod, the window and Heal as fields", line)
		}
		aws := doc["_aws"].(map[string]any)
		cw := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
		if cw["Namespace"] != "Streamfold" || aws["Timestamp"] != float64(clock.UnixMilli()) {
			t.Errorf("metric line %s: namespace or time", line)
		}
		m := cw["Metrics"].([]any)[0].(map[string]any)
		name := m["Name"].(string)
		dims, _ := json.Marshal(cw["Dimensions"])
		key := name + " " + string(dims)
		if doc["Kind"] != nil {
			continue // per kind: below
		}
		if _, dup := got[key]; dup {
			t.Errorf("metric %s written twice", key)
		}
		got[key] = doc[name].(float64)
	}
	want := map[string]float64{
		`ReconcileGaps [["Deployment"]]`:       4,
		`ReconcileEvents [["Deployment"]]`:     1200,
		`ReconcileHealed [["Deployment"]]`:     3,
		`ReconcileReadUnits [["Deployment"]]`:  150.5,
		`ReconcileWriteUnits [["Deployment"]]`: 3,
		`ReconcileS3Requests [["Deployment"]]`: 40,
		`ReconcileDuration [["Deployment"]]`:   0, // the fake clock stands still
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("metric %s = %v (written: %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("metrics %v, want %v", got, want)
	}
	byKind := map[string]float64{}
	for _, line := range strings.Split(metrics.String(), "\n") {
		var doc struct {
			Kind string
			Gaps float64 `json:"ReconcileGaps"`
		}
		if json.Unmarshal([]byte(line), &doc) == nil && doc.Kind != "" {
			byKind[doc.Kind] = doc.Gaps
		}
	}
	if want := map[string]float64{"projection": 2, "archive": 1, "conflict": 1}; len(byKind) != 3 || byKind["projection"] != 2 || byKind["archive"] != 1 || byKind["conflict"] != 1 {
		t.Errorf("gaps by kind %v, want %v", byKind, want)
	}
	// One "reconcile gap" line per row with gaps, naming domain, day and ids.
	var gapLines []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"msg":"reconcile gap"`) {
			gapLines = append(gapLines, line)
		}
	}
	if len(gapLines) != 2 || !strings.Contains(gapLines[0], `"domain":"github","day":"2026-03-09"`) || !strings.Contains(gapLines[0], `"projection":["e1","e2"]`) ||
		!strings.Contains(gapLines[1], `"domain":"messages"`) || !strings.Contains(gapLines[1], `"conflicts":1`) {
		t.Errorf("gap log lines:\n%s", strings.Join(gapLines, "\n"))
	}
	if !strings.Contains(logs.String(), `"msg":"reconcile finished"`) || !strings.Contains(logs.String(), `"gaps":4`) {
		t.Errorf("no finished line with the gap count:\n%s", logs.String())
	}
}

// TestHandleCleanRun: a run without gaps writes zeros (a graph shows the
// run) and no gap line.
func TestHandleCleanRun(t *testing.T) {
	f := &fakeRun{res: opsrec.Result{Events: 10}}
	var metrics, logs bytes.Buffer
	res, err := newTestHandler(false, f, &metrics, &logs).Handle(context.Background(), nil)
	if err != nil || res.Gaps != 0 {
		t.Fatalf("Handle = %+v, %v", res, err)
	}
	if n := strings.Count(metrics.String(), "\n"); n != 10 {
		t.Errorf("%d metric lines, want 10 (gaps total, 3 kinds, events, healed, read and write units, S3 requests, duration):\n%s", n, metrics.String())
	}
	if !strings.Contains(metrics.String(), `"ReconcileGaps":0,`) || strings.Contains(logs.String(), "reconcile gap") {
		t.Errorf("metrics:\n%s\nlogs:\n%s", metrics.String(), logs.String())
	}
}

// TestHandleRunFails: a failed run is the function's error, with no
// metrics (a partial result would under-count the gaps).
func TestHandleRunFails(t *testing.T) {
	cause := errors.New("ProvisionedThroughputExceededException")
	f := &fakeRun{res: opsrec.Result{Events: 5}, err: cause}
	var metrics, logs bytes.Buffer
	_, err := newTestHandler(false, f, &metrics, &logs).Handle(context.Background(), json.RawMessage(`{}`))
	if !errors.Is(err, cause) || errors.Is(err, ErrRequest) {
		t.Fatalf("err %v, want the run's error", err)
	}
	if metrics.Len() != 0 || !strings.Contains(logs.String(), `"msg":"reconcile failed"`) {
		t.Errorf("metrics %q, logs %q", metrics.String(), logs.String())
	}
}

func TestLoad(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := map[string]string{"STREAMFOLD_PREFIX": "sf", "STREAMFOLD_STAGE": "prod",
		"ARCHIVE_BUCKET": "sf-prod-archive", "ARCHIVE_PREFIX": "archive", "ARCHIVE_CATALOG": "glue", "ARCHIVE_NAMESPACE": "sf_prod_archive",
		"RECONCILE_WINDOW": "50h", "RECONCILE_HEAL": "true"}
	s, err := load(env(base))
	if err != nil || s.deployment() != "sf-prod" || s.naming.Table("events") != "sf-prod-events" || s.window != 50*time.Hour || !s.heal ||
		s.archive.Bucket != "sf-prod-archive" || s.archive.Namespace != "sf_prod_archive" || s.archive.Prefix != "archive" {
		t.Fatalf("load = %+v, %v", s, err)
	}
	delete(base, "RECONCILE_WINDOW")
	delete(base, "RECONCILE_HEAL")
	if s, err := load(env(base)); err != nil || s.window != DefaultWindow || s.heal {
		t.Fatalf("defaults: %+v, %v; want 26h without heal", s, err)
	}
	tests := []struct {
		name, key, value, want string
	}{
		{"no prefix", "STREAMFOLD_PREFIX", "", "STREAMFOLD_PREFIX and STREAMFOLD_STAGE are required"},
		{"no stage", "STREAMFOLD_STAGE", "", "STREAMFOLD_PREFIX and STREAMFOLD_STAGE are required"},
		{"bad stage", "STREAMFOLD_STAGE", "qa", `Naming.Stage: must be one of dev, stage, prod, got "qa"`},
		{"no catalog", "ARCHIVE_CATALOG", "", "ARCHIVE_CATALOG is not set"},
		{"no namespace", "ARCHIVE_NAMESPACE", "", "ARCHIVE_NAMESPACE is not set"},
		{"no bucket", "ARCHIVE_BUCKET", "", "Config.Bucket"},
		{"bad window", "RECONCILE_WINDOW", "1d", `RECONCILE_WINDOW="1d": want a positive duration`},
		{"zero window", "RECONCILE_WINDOW", "0s", `RECONCILE_WINDOW="0s": want a positive duration`},
		{"bad heal", "RECONCILE_HEAL", "yes", `RECONCILE_HEAL="yes": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range base {
				m[k] = v
			}
			m[tt.key] = tt.value
			if _, err := load(env(m)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}
