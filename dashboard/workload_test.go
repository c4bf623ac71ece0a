package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/streamrun"
	"github.com/streamfold/streamfold/internal/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// workload is a simulated workload appended to a fresh event table and
// projected, dated around today so that the dashboard's "last 24 hours" and
// "stuck" windows find data:
//
//   - "old": Days 3 ending at yesterday's midnight. Jobs cut by the end of
//     the window stay in_progress for more than a day: stuck jobs.
//   - "recent": Days 2 from yesterday's midnight to tomorrow's, so the last
//     24 hours are inside it whatever the time of day (some events lie in
//     the next hours; the read side does not mind).
type workload struct {
	Today time.Time // UTC midnight of the run
	First time.Time // first day of the data
	// Installation is a GitHub installation with jobs left in_progress by
	// the end of the old part: stuck jobs.
	Installation int64
	Events       int // appended, redeliveries included
	Duplicates   int // redeliveries the appender recognised
	Took         time.Duration
}

// Mixes of the two parts: the old one weighs jobs (stuck ones come from
// runs cut by its end), the recent one messages (the last 24 hours).
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

func loadWorkload(t *testing.T, c *awsclient.Clients, n schema.Naming, tables []provision.Result, oldEvents, recentEvents int) workload {
	t.Helper()
	start := time.Now()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	w := workload{Today: today, First: today.AddDate(0, 0, -4), Installation: -1}
	// The workload's dates move with the day, and so does what it holds:
	// take the first seed whose old part leaves a job in_progress.
	var evs []schema.Event
	for seed := int64(61); seed < 91 && w.Installation < 0; seed++ {
		old, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: oldEvents, Start: today.AddDate(0, 0, -4), Days: 3, Mix: oldMix})
		if err != nil {
			t.Fatal(err)
		}
		best := 0
		for inst, n := range stuckCandidates(old) {
			if n > best || (n == best && inst < w.Installation) {
				best, w.Installation = n, inst
			}
		}
		evs = old
	}
	if w.Installation < 0 {
		t.Fatal("no seed of 61..90 leaves a job in_progress at the end of the old part")
	}
	recent, _, err := simulate.Generate(simulate.Config{Seed: 7, Events: recentEvents, Start: today.AddDate(0, 0, -1), Days: 2, Mix: recentMix})
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, recent...)
	evs = append(evs, inFlight(t, today.Add(-3*time.Hour))...)
	w.Events = len(evs)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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
