package query

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// JobFold folds one job's events into its workflow_jobs item exactly as the
// projector does; projector.NewJobFold provides it (Config.JobFold). Timeline
// diffs the item after each event against the item before it, so "changed"
// means what it means for the projected item. query does not import the
// projector: the fold is given to it (docs/decisions.md, "Walls").
type JobFold interface {
	// Apply folds one decoded event of the job's subject.
	Apply(e schema.Event, p schema.Payload)
	// Item is the job's item after the events applied so far, nil while
	// they imply none.
	Item() map[string]types.AttributeValue
}

// Change is one field of a job that an event changed: its path in the
// seed 003 workflow_jobs item ("status", "labels[1]"), the value before and
// the value after (nil when absent).
type Change struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// TimelineEntry is one event of a job's timeline.
type TimelineEntry struct {
	ID         string     `json:"id"`
	Type       string     `json:"type"`
	Source     string     `json:"source"`
	Time       time.Time  `json:"time"`
	RecordedAt *time.Time `json:"recordedAt,omitempty"`
	// Changes are the fields of the job item this event changed, relative
	// to the item folded from the events before it (in timeline order);
	// last_updated_at, which every event moves, is left out. An event that
	// changes nothing (a duplicate delivery, a late queued) has none.
	Changes []Change `json:"changes"`
	// Data is the event's payload exactly as it was appended.
	Data json.RawMessage `json:"data"`
}

// Timeline is a job's history from the raw events (seed 003's
// workflow_job_events, which streamfold's event table is).
type Timeline struct {
	Subject string          `json:"subject"`
	Events  []TimelineEntry `json:"events"`
	// Truncated is true when the job had more than Config.MaxReadItems events.
	Truncated bool `json:"truncated,omitempty"`
}

// timelineIgnored are item attributes left out of the changes.
var timelineIgnored = map[string]bool{"last_updated_at": true}

// jobEvents reads every event of a job's subject, ordered by event time,
// then recordedat, then id.
func (c *Client) jobEvents(ctx context.Context, what string, installation, jobID int64) (string, []schema.Event, bool, error) {
	if err := checkJobKey(installation, jobID, "id"); err != nil {
		return "", nil, false, err
	}
	subject := schema.JobSubject(installation, jobID)
	k := newCond().eq(schema.AttrSubject, avS(subject))
	items, truncated, err := c.all(ctx, what, c.queryInput(schema.TableEvents, "", k, nil, true), c.cfg.MaxReadItems)
	if err != nil {
		return "", nil, false, err
	}
	if len(items) == 0 {
		return "", nil, false, fmt.Errorf("%w: no events for %s", ErrNotFound, subject)
	}
	evs := make([]schema.Event, 0, len(items))
	for _, it := range items {
		e, err := schema.EventFromItem(it)
		if err != nil {
			return "", nil, false, fmt.Errorf("query: %s: %w", what, err)
		}
		evs = append(evs, e)
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventLess(evs[i], evs[j]) })
	return subject, evs, truncated, nil
}

func eventLess(a, b schema.Event) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	ra, rb := recorded(a), recorded(b)
	if !ra.Equal(rb) {
		return ra.Before(rb)
	}
	return a.ID < b.ID
}

func recorded(e schema.Event) time.Time {
	if e.RecordedAt == nil {
		return time.Time{}
	}
	return *e.RecordedAt
}

// Timeline returns a job's events in time order, each with the fields of the
// job it changed: one Query on the event table by the job's subject (every
// page), folded with the projector's own job fold (Config.JobFold) so that
// "changed" means what it means for the workflow_jobs item. Without
// Config.JobFold it returns ErrNoJobFold.
func (c *Client) Timeline(ctx context.Context, installation, jobID int64) (Timeline, error) {
	if err := checkJobKey(installation, jobID, "id"); err != nil {
		return Timeline{}, err
	}
	if c.cfg.JobFold == nil {
		return Timeline{}, fmt.Errorf("query: timeline: %w", ErrNoJobFold)
	}
	subject, evs, truncated, err := c.jobEvents(ctx, "timeline", installation, jobID)
	if err != nil {
		return Timeline{}, err
	}
	out := Timeline{Subject: subject, Truncated: truncated, Events: make([]TimelineEntry, 0, len(evs))}
	agg := c.cfg.JobFold()
	prev := map[string]any{}
	for _, e := range evs {
		entry := TimelineEntry{ID: e.ID, Type: e.Type, Source: e.Source, Time: e.Time.UTC(), RecordedAt: e.RecordedAt, Data: json.RawMessage(e.Data), Changes: []Change{}}
		if p, err := schema.Decode(e); err == nil {
			agg.Apply(e, p)
		}
		next := map[string]any{}
		if item := agg.Item(); item != nil {
			flatten("", Plain(item), next)
		}
		entry.Changes = diff(prev, next)
		prev = next
		out.Events = append(out.Events, entry)
	}
	return out, nil
}

// flatten writes every leaf of v under its path: "a", "a.b", "a[0]".
func flatten(path string, v any, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if path == "" && timelineIgnored[k] {
				continue
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		for i, e := range t {
			flatten(path+"["+strconv.Itoa(i)+"]", e, out)
		}
	default:
		out[path] = v
	}
}

// diff lists the paths whose values differ between two flattened items,
// sorted by path.
func diff(prev, next map[string]any) []Change {
	out := []Change{}
	for p, n := range next {
		if o, ok := prev[p]; !ok || !reflect.DeepEqual(o, n) {
			out = append(out, Change{Path: p, Old: prev[p], New: n})
		}
	}
	for p, o := range prev {
		if _, ok := next[p]; !ok {
			out = append(out, Change{Path: p, Old: o, New: nil})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Delivery is one webhook delivery of a job.
type Delivery struct {
	// ID is the event id: the GitHub delivery GUID.
	ID         string     `json:"id"`
	Time       time.Time  `json:"time"`
	RecordedAt *time.Time `json:"recordedAt,omitempty"`
	// SameAsFirst is true when its payload equals the first delivery's of the
	// group (as JSON): the same webhook sent again under a new delivery id.
	SameAsFirst bool `json:"sameAsFirst"`
}

// DuplicateGroup is one webhook action a job received more than once.
type DuplicateGroup struct {
	Action     string     `json:"action"`
	Count      int        `json:"count"`
	Deliveries []Delivery `json:"deliveries"`
}

// Duplicates are the duplicate webhooks of a job (seed 003: "detect
// duplicate webhooks").
type Duplicates struct {
	Subject string `json:"subject"`
	// Webhooks counts the job's stored workflow_job deliveries.
	Webhooks int `json:"webhooks"`
	// Groups lists, per action (queued, waiting, in_progress, completed),
	// the actions delivered more than once, in action order; each group's
	// deliveries are in time order.
	Groups []DuplicateGroup `json:"groups"`
}

// Duplicates groups a job's webhook deliveries by action and returns the
// actions received more than once: one Query on the event table by the
// job's subject. A redelivery with the same delivery id is never stored
// twice (the appender reports it as a duplicate and writes nothing), so
// what shows here are deliveries with distinct ids: GitHub queueing a job
// again after a deployment approval, or sending one webhook twice.
func (c *Client) Duplicates(ctx context.Context, installation, jobID int64) (Duplicates, error) {
	subject, evs, _, err := c.jobEvents(ctx, "duplicates", installation, jobID)
	if err != nil {
		return Duplicates{}, err
	}
	out := Duplicates{Subject: subject, Groups: []DuplicateGroup{}}
	byAction := map[string][]schema.Event{}
	for _, e := range evs {
		action, ok := strings.CutPrefix(e.Type, schema.WorkflowJobTypePrefix)
		if !ok {
			continue
		}
		out.Webhooks++
		byAction[action] = append(byAction[action], e)
	}
	for _, action := range []string{"queued", "waiting", "in_progress", "completed"} {
		group := byAction[action]
		if len(group) < 2 {
			continue
		}
		g := DuplicateGroup{Action: action, Count: len(group)}
		for _, e := range group {
			g.Deliveries = append(g.Deliveries, Delivery{ID: e.ID, Time: e.Time.UTC(), RecordedAt: e.RecordedAt, SameAsFirst: sameJSON(group[0].Data, e.Data)})
		}
		out.Groups = append(out.Groups, g)
	}
	return out, nil
}

// sameJSON compares two JSON texts by value.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
