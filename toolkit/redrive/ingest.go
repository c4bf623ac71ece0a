package redrive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
)

// marker is what replaying needs of *deadletter.Table.
type marker interface {
	MarkReplayed(ctx context.Context, d deadletter.Letter) error
}

// Replayed is what replay did with one ingest dead letter.
type Replayed struct {
	Position string `json:"position"`
	EventID  string `json:"eventId"`
	// Outcome is the adapter's (appended, already_appended, skipped),
	// still_failing (a permanent error: left quarantined) or failed (a
	// transient error, or the entry could not be read or marked).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// replayIngest re-submits the quarantined ingest dead letters through the
// Step Functions adapter: with the tags the function recorded, else with
// tags (nil: none). Entries the adapter handles are marked replayed; a
// permanent error leaves the entry quarantined (StillPoison), a transient
// one is Failed. A conflict (reason ingest.ReasonConflict) is never
// replayed: a person decides between its two versions, so it stays
// quarantined (StillPoison, still_failing). The result has one Results entry per
// quarantined letter.
func replayIngest(ctx context.Context, letters []deadletter.Letter, app ingest.EventAppender, tags ingest.TagSource, dl marker, log *slog.Logger) ReplayResult {
	res := ReplayResult{StillPoison: []string{}, Failed: []string{}, Results: []Replayed{}}
	for _, d := range letters {
		if d.Status != deadletter.StatusQuarantined {
			continue
		}
		r := Replayed{Position: d.Position, EventID: d.EventID}
		outcome, err := replayOne(ctx, d, app, tags, log)
		switch {
		case err != nil && isPermanentErr(err):
			r.Outcome, r.Error = "still_failing", err.Error()
			res.StillPoison = append(res.StillPoison, d.Position+": "+err.Error())
		case err != nil:
			r.Outcome, r.Error = "failed", err.Error()
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
		default:
			r.Outcome = outcome.String()
			if err := dl.MarkReplayed(ctx, d); err != nil {
				r.Outcome, r.Error = "failed", "appended but not marked replayed: "+err.Error()
				res.Failed = append(res.Failed, d.Position+": "+r.Error)
				break
			}
			res.Replayed++
		}
		res.Results = append(res.Results, r)
	}
	return res
}

// replayOne runs one dead letter's event through the adapter.
func replayOne(ctx context.Context, d deadletter.Letter, app ingest.EventAppender, tags ingest.TagSource, log *slog.Logger) (ingest.AdapterOutcome, error) {
	if d.Reason == ingest.ReasonConflict {
		return 0, permanent{fmt.Errorf("a conflict between two versions of event %s is not replayed: a person decides (both are in the record; the stored one stays in the event table; see docs/event-contract.md)", d.EventID)}
	}
	rec, err := ingest.ParseStepFunctionsDeadLetter(d.Record)
	if err != nil {
		return 0, permanent{err}
	}
	var ev ingest.EventBridgeEvent
	if err := json.Unmarshal(rec.Event, &ev); err != nil {
		return 0, permanent{fmt.Errorf("EventBridge event: %w", err)}
	}
	var src ingest.TagSource = noTags{}
	switch {
	case rec.Tags != nil:
		src = recordedTags(rec.Tags)
	case tags != nil:
		src = tags
	}
	return ingest.NewStepFunctionsAdapter(app, src, log).Handle(ctx, ev)
}

// noTags is the tag source of a dead letter that recorded no tags when no
// other source is configured: the agent rule cannot be applied.
type noTags struct{}

func (noTags) Tags(context.Context, string) (map[string]string, error) {
	return nil, permanent{errors.New(`no state machine tags were recorded with this dead letter and --sfn-tags is "none": give --sfn-tags aws or a tags file`)}
}

// recordedTags is the tag source of a dead letter: the tags the function
// found, whatever the state machine.
type recordedTags map[string]string

func (r recordedTags) Tags(context.Context, string) (map[string]string, error) {
	return maps.Clone(map[string]string(r)), nil
}

// permanent marks an error that replaying again cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string   { return p.err.Error() }
func (p permanent) Unwrap() error   { return p.err }
func (p permanent) Permanent() bool { return true }

func isPermanentErr(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}
