package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// workload is a simulated workload appended to a fresh event table and
// projected. The simulator weighs days by weekday, so its parts are
// generated from a fixed weekday, the Monday 5 to 11 days before the test
// clock's today (testclock.WeekdayOnOrBefore): the same events, shifted by
// whole weeks, whatever day the test runs, and all of them before today.
// What the page's windows relative to now need is added by hand:
//
//   - "old": Days 3 from that Monday, jobs-heavy. Jobs cut by its end
//     (Thursday 00:00, at least a day before now) stay in_progress: stuck
//     jobs, always the same ones.
//   - "recent": Days 2 from that Thursday to Saturday 00:00 (at the latest
//     today's midnight), messages- and albums-heavy.
//   - in flight: album executions running and waiting for validation,
//     started 3 hours before today (inFlight).
//   - last hours: messages of every stage created in the 2 hours before
//     now (recentMessages), so that "the last 24 hours" hold some on the
//     API's clock whatever the time of day.
type workload struct {
	Now   time.Time // the test clock when the workload was planned: the API's clock
	Today time.Time // UTC midnight of Now
	First time.Time // first day of the data (the Monday)
	// Installation is a GitHub installation with jobs left in_progress by
	// the end of the old part: stuck jobs.
	Installation int64
	Events       int // appended, redeliveries included
	Duplicates   int // redeliveries the appender recognised
	Took         time.Duration
}

// oldSeed and recentSeed are the simulator's seeds of the two parts.
const oldSeed, recentSeed = 61, 7

// Mixes of the two parts: the old one weighs jobs (stuck ones come from
// runs cut by its end), the recent one messages and albums.
var (
	oldMix    = simulate.Mix{Jobs: 50, Agents: 10, Albums: 25, Messages: 15}
	recentMix = simulate.Mix{Jobs: 20, Agents: 10, Albums: 30, Messages: 40}
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// stuckCandidates counts, per installation, the jobs whose events include
// an in_progress webhook and no completed one.
func stuckCandidates(evs []schema.Event) map[int64]int {
	state := map[string]string{}
	for _, e := range evs {
		switch e.Type {
		case schema.TypeJobInProgress:
			if state[e.Subject] == "" {
				state[e.Subject] = "in_progress"
			}
		case schema.TypeJobCompleted:
			state[e.Subject] = "completed"
		}
	}
	out := map[int64]int{}
	for subject, st := range state {
		var inst, job int64
		if st == "in_progress" {
			if _, err := fmt.Sscanf(subject, "github/%d/job/%d", &inst, &job); err == nil {
				out[inst]++
			}
		}
	}
	return out
}

// inFlight returns album executions still in flight, started at at: 3
// running (2 sf, 1 ldf) and 3 waiting for a pending validation task (1 sf,
// 2 ldf). The simulator finishes what it starts, so its workloads leave
// none for the dashboard's "running now" and "pending validation".
func inFlight(t *testing.T, at time.Time) []schema.Event {
	t.Helper()
	var out []schema.Event
	n := 0
	add := func(typ, wt string, p schema.Payload, subject string) {
		n++
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, schema.Event{SpecVersion: schema.SpecVersion, ID: fmt.Sprintf("inflight-%d", n), Source: "streamfold.albums/" + wt,
			Type: typ, Subject: subject, Time: at.Add(time.Duration(n) * time.Minute), Data: data})
	}
	id := func(i int) string { return fmt.Sprintf("0d5e6f70-0000-4000-8000-%012d", i) }
	for i, wt := range []string{schema.WorkflowStepFunctions, schema.WorkflowStepFunctions, schema.WorkflowDurableFunctions} {
		e := &schema.AlbumExecutionEvent{WorkflowType: wt, ExecutionID: id(i), ImageS3Key: "uploads/in-flight.jpg"}
		add(schema.TypeAlbumExecutionStarted, wt, e, e.Subject())
	}
	expires := at.Add(48 * time.Hour)
	for i, wt := range []string{schema.WorkflowStepFunctions, schema.WorkflowDurableFunctions, schema.WorkflowDurableFunctions} {
		exec := &schema.AlbumExecutionEvent{WorkflowType: wt, ExecutionID: id(10 + i), ImageS3Key: "uploads/to-validate.jpg"}
		add(schema.TypeAlbumExecutionStarted, wt, exec, exec.Subject())
		task := &schema.TaskEvent{WorkflowType: wt, TaskID: fmt.Sprintf("task-in-flight-%d", i), ExecutionID: exec.ExecutionID,
			ImageS3Key: exec.ImageS3Key, TaskToken: fmt.Sprintf("token-%d", i), ExpiresAt: &expires,
			Albums: []schema.TaskAlbum{{AlbumIndex: 1, AlbumName: "Abbey Road", Artist: "The Beatles", Year: 1969}}}
		add(schema.TypeTaskCreated, wt, task, task.Subject())
		exec.CurrentStep = "human-validation"
		add(schema.TypeAlbumExecutionWaiting, wt, exec, exec.Subject())
	}
	return out
}

// recentMessages returns, for each stage, a completed, a failed and a
// queued message created in the 2 hours before now.
func recentMessages(t *testing.T, now time.Time) []schema.Event {
	t.Helper()
	var out []schema.Event
	n := 0
	for i, stage := range schema.Stages {
		for j, end := range []string{schema.TypeMessageCompleted, schema.TypeMessageFailed, schema.TypeMessageQueued} {
			id := fmt.Sprintf("0e6f7081-0000-4000-8000-%06d%06d", i, j)
			at := now.Add(-2 * time.Hour).Add(time.Duration(10*(3*i+j)) * time.Minute)
			add := func(typ string, p schema.MessageEvent) {
				n++
				p.MessageID, p.Stage = id, stage
				data, err := json.Marshal(&p)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, schema.Event{SpecVersion: schema.SpecVersion, ID: fmt.Sprintf("recent-message-%d", n), Source: "rez_agent/" + stage,
					Type: typ, Subject: p.Subject(), Time: at, Data: data})
				at = at.Add(time.Second)
			}
			add(schema.TypeMessageCreated, schema.MessageEvent{MessageType: "manual_notification", CreatedBy: "user:alice@example.com",
				CorrelationID: fmt.Sprintf("0e6f7081-0000-4000-9000-%06d%06d", i, j), Payload: json.RawMessage(`{"text":"hello","priority":"default","tags":["manual"]}`)})
			retries := 0
			switch end {
			case schema.TypeMessageQueued:
				add(end, schema.MessageEvent{})
			case schema.TypeMessageFailed:
				add(schema.TypeMessageProcessing, schema.MessageEvent{RetryCount: &retries})
				add(end, schema.MessageEvent{ErrorMessage: "ntfy.sh returned 503 Service Unavailable", RetryCount: &retries})
			default:
				add(schema.TypeMessageProcessing, schema.MessageEvent{RetryCount: &retries})
				add(end, schema.MessageEvent{NotificationID: fmt.Sprintf("ntfy_recent%d%d", i, j), RetryCount: &retries})
			}
		}
	}
	return out
}

// planWorkload generates the workload's events for the test clock's now
// (the decision, apart from appending and projecting them).
func planWorkload(t *testing.T, now time.Time, oldEvents, recentEvents int) (workload, []schema.Event) {
	t.Helper()
	today := now.UTC().Truncate(24 * time.Hour)
	monday := testclock.WeekdayOnOrBefore(today.AddDate(0, 0, -5), time.Monday)
	w := workload{Now: now, Today: today, First: monday, Installation: -1}
	old, _, err := simulate.Generate(simulate.Config{Seed: oldSeed, Events: oldEvents, Start: monday, Days: 3, Mix: oldMix})
	if err != nil {
		t.Fatal(err)
	}
	best := 0
	for inst, n := range stuckCandidates(old) {
		if n > best || (n == best && inst < w.Installation) {
			best, w.Installation = n, inst
		}
	}
	if w.Installation < 0 {
		// The same events every day: this fails on every day or on none.
		t.Fatalf("seed %d's old part (Days 3 from a Monday) leaves no job in_progress", oldSeed)
	}
	recent, _, err := simulate.Generate(simulate.Config{Seed: recentSeed, Events: recentEvents, Start: monday.AddDate(0, 0, 3), Days: 2, Mix: recentMix})
	if err != nil {
		t.Fatal(err)
	}
	evs := append(old, recent...)
	evs = append(evs, inFlight(t, today.Add(-3*time.Hour))...)
	evs = append(evs, recentMessages(t, now)...)
	w.Events = len(evs)
	return w, evs
}

func loadWorkload(t *testing.T, c *awsclient.Clients, n schema.Naming, tables []provision.Result, oldEvents, recentEvents int) workload {
	t.Helper()
	start := time.Now()
	w, evs := planWorkload(t, testclock.Now(), oldEvents, recentEvents)

	ctx, cancel := context.WithCancel(context.Background()) // no deadline of its own: go test -timeout bounds it (load must not fail it)
	defer cancel()
	a, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents), Concurrency: 32})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(evs); i += 1000 {
		res, err := a.Append(ctx, evs[i:min(i+1000, len(evs))])
		if err != nil || res.Count(ingest.Rejected) > 0 || res.Count(ingest.Failed) > 0 {
			t.Fatalf("append: %v (%d rejected, %d failed: %v)", err, res.Count(ingest.Rejected), res.Count(ingest.Failed), res.Errors)
		}
		w.Duplicates += res.Count(ingest.Duplicate)
	}

	appended := time.Since(start)
	stream := testenv.EventStream(t, tables)
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(store, projector.Config{Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	h := projector.NewHandler(proj, dl, projector.HandlerConfig{}, quietLogger())
	r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints)), h.Handle, streamrun.Config{
		StreamARN: stream, Consumer: "projector", BatchSize: 1000, PollInterval: 50 * time.Millisecond,
		UntilCaughtUp: true, OnPoison: dl.OnPoison("projector"), Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatalf("project the stream: %v", err)
	}
	if letters, err := dl.List(ctx, "projector"); err != nil || len(letters) > 0 {
		t.Fatalf("the simulated workload was dead-lettered (%v): %+v", err, letters)
	}
	w.Took = time.Since(start)
	t.Logf("workload: %d events (%d duplicates) from %s appended in %s, projected in %s", w.Events, w.Duplicates,
		w.First.Format("2006-01-02"), appended.Round(time.Millisecond), (w.Took - appended).Round(time.Millisecond))
	return w
}

// TestWorkloadIsTheSameWhateverTheDay plans the end-to-end workload on 8
// consecutive days at several times of day (no service needed): the simulated
// events are the same ones, shifted by whole weeks, all before today; the
// installation with stuck jobs is the same; the hand-made messages fall in
// the last 24 hours of the API's clock. So the end-to-end test's guards
// ("no stuck job", "no message in the last 24 hours", ...) hold or fail
// whatever the day, never by the luck of a weekday.
func TestWorkloadIsTheSameWhateverTheDay(t *testing.T) {
	type shape struct {
		id, typ, subject string
		at               time.Duration
	}
	simulated := func(w workload, evs []schema.Event) []shape {
		var out []shape
		for _, e := range evs {
			if strings.HasPrefix(e.ID, "inflight-") || strings.HasPrefix(e.ID, "recent-message-") {
				continue
			}
			if !e.Time.Before(w.Today) {
				t.Fatalf("now %s: simulated event %s at %s, not before today", w.Now, e.ID, e.Time)
			}
			out = append(out, shape{e.ID, e.Type, e.Subject, e.Time.Sub(w.First)})
		}
		return out
	}
	var ref workload
	var refShapes []shape
	hours := []time.Duration{0, 90 * time.Minute, 13 * time.Hour, 23*time.Hour + 59*time.Minute}
	for d := range 8 {
		now := time.Date(2026, time.November, 19+d, 0, 0, 0, 0, time.UTC).Add(hours[d%len(hours)])
		w, evs := planWorkload(t, now, 800, 600)
		if w.First.Weekday() != time.Monday || w.Today.Sub(w.First) < 5*24*time.Hour || w.Today.Sub(w.First) > 11*24*time.Hour {
			t.Fatalf("now %s: first day %s, want the Monday 5 to 11 days before today", now, w.First)
		}
		shapes := simulated(w, evs)
		messages := 0
		for _, e := range evs {
			if e.Type == schema.TypeMessageCreated && e.Time.After(now.Add(-24*time.Hour)) && !e.Time.After(now) {
				messages++
			}
		}
		if messages < len(schema.Stages) {
			t.Errorf("now %s: %d messages created in the last 24 hours", now, messages)
		}
		if ref.Now.IsZero() {
			ref, refShapes = w, shapes
			continue
		}
		if w.Installation != ref.Installation || w.Events != ref.Events || !slices.Equal(shapes, refShapes) {
			t.Fatalf("now %s: installation %d, %d events; now %s: installation %d, %d events (same simulated events: %v)",
				now, w.Installation, w.Events, ref.Now, ref.Installation, ref.Events, slices.Equal(shapes, refShapes))
		}
	}
}
