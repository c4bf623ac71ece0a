package query

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func TestTimelineIntegration(t *testing.T) {
	w := loadWorld(t)
	bySubject := map[string][]schema.Event{}
	for _, e := range w.events {
		if w.appended[e.Subject] {
			bySubject[e.Subject] = append(bySubject[e.Subject], e)
		}
	}
	subjects := make([]string, 0, len(bySubject))
	for s := range bySubject {
		subjects = append(subjects, s)
	}
	sort.Strings(subjects)
	checked := 0
	defer func() {
		if checked < timelineJobs {
			t.Errorf("only %d timelines checked", checked)
		}
	}()
	for _, s := range subjects {
		var inst, job int64
		if _, err := fmt.Sscanf(s, "github/%d/job/%d", &inst, &job); err != nil {
			t.Fatal(err)
		}
		checked++
		tl, err := w.q.Timeline(ctx, inst, job)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		// The distinct events of the subject, each once, in time order.
		ids := map[string]bool{}
		for _, e := range bySubject[s] {
			ids[e.ID] = true
		}
		if len(tl.Events) != len(ids) || tl.Subject != s {
			t.Fatalf("%s: %d events, want %d", s, len(tl.Events), len(ids))
		}
		// Replaying the changes from nothing gives the projected item.
		state := map[string]any{}
		for i, e := range tl.Events {
			if !ids[e.ID] {
				t.Fatalf("%s: unknown event %s", s, e.ID)
			}
			if i > 0 && e.Time.Before(tl.Events[i-1].Time) {
				t.Fatalf("%s: events out of time order at %d", s, i)
			}
			for _, c := range e.Changes {
				if fmt.Sprint(state[c.Path]) != fmt.Sprint(c.Old) {
					t.Fatalf("%s: event %s changes %s from %v, but it was %v", s, e.ID, c.Path, c.Old, state[c.Path])
				}
				if c.New == nil {
					delete(state, c.Path)
				} else {
					state[c.Path] = c.New
				}
			}
		}
		item, err := w.q.Job(ctx, inst, job)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want := map[string]any{}
		flatten("", item, want)
		if canonJSON(state) != canonJSON(want) {
			t.Fatalf("%s: replayed changes\n%s\nprojected item\n%s", s, canonJSON(state), canonJSON(want))
		}
	}
	t.Run("edge job transitions", func(t *testing.T) {
		tl, err := w.q.Timeline(ctx, edgeInstallation, 9001)
		if err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, e := range tl.Events {
			for _, c := range e.Changes {
				if c.Path == "status" {
					statuses = append(statuses, fmt.Sprintf("%v>%v", c.Old, c.New))
				}
			}
		}
		// The second queued delivery changes nothing.
		if got := strings.Join(statuses, " "); got != "<nil>>queued queued>in_progress in_progress>completed" {
			t.Fatalf("status changes %q", got)
		}
		if len(tl.Events) != 4 || len(tl.Events[1].Changes) != 0 {
			t.Fatalf("want 4 events, the second without changes: %+v", tl.Events)
		}
	})
	if _, err := w.q.Timeline(ctx, 1, 424242); !errors.Is(err, ErrNotFound) {
		t.Fatalf("timeline of an unknown job: %v", err)
	}
}

func TestDuplicatesIntegration(t *testing.T) {
	w := loadWorld(t)
	// Expected: per job, the webhook actions delivered under more than one id.
	type key struct{ subject, action string }
	deliveries := map[key]map[string]bool{}
	for _, e := range w.events {
		action, ok := strings.CutPrefix(e.Type, schema.WorkflowJobTypePrefix)
		if !ok {
			continue
		}
		k := key{e.Subject, action}
		if deliveries[k] == nil {
			deliveries[k] = map[string]bool{}
		}
		deliveries[k][e.ID] = true
	}
	want := map[string]map[string]int{}
	for k, ids := range deliveries {
		if len(ids) > 1 {
			if want[k.subject] == nil {
				want[k.subject] = map[string]int{}
			}
			want[k.subject][k.action] = len(ids)
		}
	}
	if len(want) < 2 {
		t.Fatalf("only %d jobs with duplicate webhooks in the workload", len(want))
	}
	for subject, actions := range want {
		var inst, job int64
		fmt.Sscanf(subject, "github/%d/job/%d", &inst, &job)
		d, err := w.q.Duplicates(ctx, inst, job)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, g := range d.Groups {
			if g.Count != len(g.Deliveries) {
				t.Fatalf("%s %s: count %d, %d deliveries", subject, g.Action, g.Count, len(g.Deliveries))
			}
			got[g.Action] = g.Count
		}
		if fmt.Sprint(got) != fmt.Sprint(actions) {
			t.Fatalf("%s: duplicate groups %v, want %v", subject, got, actions)
		}
	}
	d, err := w.q.Duplicates(ctx, edgeInstallation, 9001)
	if err != nil {
		t.Fatal(err)
	}
	if d.Webhooks != 4 || len(d.Groups) != 1 || d.Groups[0].Action != "queued" || d.Groups[0].Count != 2 ||
		d.Groups[0].Deliveries[0].ID != "edge-dup-q1" || d.Groups[0].Deliveries[1].ID != "edge-dup-q2" || !d.Groups[0].Deliveries[1].SameAsFirst {
		t.Fatalf("edge job duplicates: %+v", d)
	}
	none, err := w.q.Duplicates(ctx, edgeInstallation, 9000)
	if err != nil || len(none.Groups) != 0 || none.Webhooks != 2 {
		t.Fatalf("job without duplicates: %+v %v", none, err)
	}
}

func TestMessagesIntegration(t *testing.T) {
	w := loadWorld(t)
	msgs := w.memItems(schema.TableMessages)
	if len(msgs) < 20 {
		t.Fatalf("only %d messages in the workload", len(msgs))
	}
	id, key := attr("message_id"), func(it map[string]any) string { return str(it, "created_date") }
	types := map[string]bool{}
	for _, m := range msgs {
		types[str(m, "message_type")] = true
	}
	window := TimeRange{From: w.start.Add(8 * time.Hour), To: w.start.Add(32 * time.Hour)}
	in := func(r TimeRange, it map[string]any) bool {
		s := key(it)
		return (r.From.IsZero() || s >= schema.FormatItemTime(r.From)) && (r.To.IsZero() || s <= schema.FormatItemTime(r.To))
	}
	match := func(f MessageFilter) func(map[string]any) bool {
		return func(it map[string]any) bool {
			return (f.Stage == "" || str(it, "stage") == f.Stage) && (f.Status == "" || str(it, "status") == f.Status) &&
				(f.Type == "" || str(it, "message_type") == f.Type) && in(f.Created, it)
		}
	}
	var filters []MessageFilter
	for _, st := range schema.Stages {
		filters = append(filters, MessageFilter{Stage: st}, MessageFilter{Stage: st, Created: window}, MessageFilter{Stage: st, Status: "completed"})
	}
	for _, s := range MessageStatuses {
		filters = append(filters, MessageFilter{Status: s}, MessageFilter{Status: s, Created: window})
	}
	for ty := range types {
		filters = append(filters, MessageFilter{Type: ty}, MessageFilter{Type: ty, Stage: "dev", Created: TimeRange{From: window.From}})
	}
	var cases []listCase
	for _, f := range filters {
		cases = append(cases, listCase{
			name:  fmt.Sprintf("%+v", f),
			fetch: func(p PageRequest) (Page, error) { return w.q.Messages(ctx, f, p) },
			want:  filterSort(msgs, match(f), key, true),
			id:    id, sortKey: key,
		})
	}
	runLists(t, w, cases)

	t.Run("by id", func(t *testing.T) {
		for _, want := range msgs[:10] {
			got, err := w.q.Message(ctx, str(want, "message_id"))
			if err != nil || canonJSON(got) != canonJSON(want) {
				t.Fatalf("message: %v\n got %s\nwant %s", err, canonJSON(got), canonJSON(want))
			}
		}
		if _, err := w.q.Message(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("missing message: %v", err)
		}
	})

	t.Run("stats last 24 hours", func(t *testing.T) {
		from, to := w.now.Add(-24*time.Hour), w.now
		r := TimeRange{From: from, To: to}
		metrics := map[string]map[string]any{}
		for _, row := range w.memItems(schema.TableMetrics) {
			metrics[str(row, "scope")+"|"+str(row, "date")] = row
		}
		for _, stage := range []string{"", "dev"} {
			before := w.q.Stats()
			ms, err := w.q.MessageStats(ctx, stage, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if d := w.q.Stats().Sub(before); d.BatchGetItem != 1 || d.GetItem != 0 {
				t.Fatalf("stats requests %+v: want one BatchGetItem and COUNT queries", d)
			}
			wantStages := schema.Stages
			if stage != "" {
				wantStages = []string{stage}
			}
			if len(ms.Stages) != len(wantStages) {
				t.Fatalf("%d stages, want %d", len(ms.Stages), len(wantStages))
			}
			total := int64(0)
			for i, s := range ms.Stages {
				if s.Stage != wantStages[i] {
					t.Fatalf("stage %d is %s, want %s", i, s.Stage, wantStages[i])
				}
				want := map[string]int64{}
				for _, st := range MessageStatuses {
					want[st] = 0
				}
				for _, m := range msgs {
					if str(m, "stage") == s.Stage && in(r, m) {
						want[str(m, "status")]++
					}
				}
				if fmt.Sprint(want) != fmt.Sprint(s.Counts) {
					t.Fatalf("stage %s counts %v, want %v", s.Stage, s.Counts, want)
				}
				total += s.Total
				if done := want["completed"] + want["failed"]; done > 0 {
					if s.SuccessRate == nil || math.Abs(*s.SuccessRate-float64(want["completed"])/float64(done)) > 1e-12 {
						t.Fatalf("stage %s success rate %v", s.Stage, s.SuccessRate)
					}
				}
				var wantDaily []string
				for _, d := range []time.Time{from, to} {
					if row, ok := metrics["messages/"+s.Stage+"|"+d.Format("2006-01-02")]; ok {
						wantDaily = append(wantDaily, canonJSON(row))
					}
				}
				var gotDaily []string
				for _, row := range s.Daily {
					gotDaily = append(gotDaily, canonJSON(row))
				}
				if strings.Join(gotDaily, "\n") != strings.Join(wantDaily, "\n") {
					t.Fatalf("stage %s daily rows\n got %v\nwant %v", s.Stage, gotDaily, wantDaily)
				}
			}
			if stage == "" && total == 0 {
				t.Fatal("no message in the last 24 hours of the workload")
			}
		}
	})
}

// TestCursorsIntegration: cursors of real pages, modified, truncated or
// swapped between queries, are rejected before DynamoDB sees them.
func TestCursorsIntegration(t *testing.T) {
	w := loadWorld(t)
	p1, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3})
	if err != nil || p1.Next == "" {
		t.Fatalf("messages page: %v, next %q", err, p1.Next)
	}
	p2, err := w.q.ExecutionsByStatus(ctx, "SUCCEEDED", TimeRange{}, PageRequest{Limit: 3})
	if err != nil || p2.Next == "" {
		t.Fatalf("executions page: %v, next %q", err, p2.Next)
	}
	flip := []byte(p1.Next)
	flip[len(flip)/3] ^= 0x01
	other, _ := New(w.c.DynamoDB, w.n, Config{CursorKey: []byte("a-different-key-of-enough-bytes")})
	foreign, err := other.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	before := w.q.Stats()
	for name, call := range map[string]func() error{
		"flipped byte": func() error {
			_, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3, Cursor: string(flip)})
			return err
		},
		"truncated": func() error {
			_, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3, Cursor: p1.Next[:len(p1.Next)-4]})
			return err
		},
		"executions cursor on messages": func() error {
			_, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3, Cursor: p2.Next})
			return err
		},
		"messages cursor on executions": func() error {
			_, err := w.q.ExecutionsByStatus(ctx, "SUCCEEDED", TimeRange{}, PageRequest{Limit: 3, Cursor: p1.Next})
			return err
		},
		"other stage": func() error {
			_, err := w.q.Messages(ctx, MessageFilter{Stage: "dev"}, PageRequest{Limit: 3, Cursor: p1.Next})
			return err
		},
		"signed with another key": func() error {
			_, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3, Cursor: foreign.Next})
			return err
		},
	} {
		if err := call(); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%s: %v, want ErrBadCursor", name, err)
		}
	}
	if d := w.q.Stats().Sub(before); d.Requests != 0 {
		t.Fatalf("bad cursors sent %d requests", d.Requests)
	}
	// The genuine cursor still works, and a page costs one request.
	before = w.q.Stats()
	if _, err := w.q.Messages(ctx, MessageFilter{Stage: "prod"}, PageRequest{Limit: 3, Cursor: p1.Next}); err != nil {
		t.Fatal(err)
	}
	if d := w.q.Stats().Sub(before); d.Requests != 1 {
		t.Fatalf("a page took %d requests", d.Requests)
	}
}
