package opsview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

// Statuses a Filter selects (besides deadletter.StatusQuarantined and
// deadletter.StatusReplayed).
const StatusAll = "all"

// ErrInvalidFilter is wrapped by a FilterError.
var ErrInvalidFilter = errors.New("opsview: invalid filter")

// FilterError names the Filter field at fault.
type FilterError struct {
	Field  string // consumer, since, status or limit
	Reason string
}

func (e *FilterError) Error() string { return "opsview: filter " + e.Field + ": " + e.Reason }
func (e *FilterError) Unwrap() error { return ErrInvalidFilter }

// MaxConsumerLength bounds Filter.Consumer (DynamoDB's partition key limit
// is far above any consumer name).
const MaxConsumerLength = 256

// Filter selects dead letters.
type Filter struct {
	// Consumer is the consumer whose dead letters to list; "" for all
	// (Config.DeadLetterConsumers, Config.Consumers and every consumer with
	// a heartbeat).
	Consumer string
	// Since keeps the letters quarantined at or after it; zero means the
	// view's Window before now.
	Since time.Time
	// Status is "quarantined", "replayed" or "all" ("" is all).
	Status string
	// Limit bounds the items (the newest); 0 means DefaultLimit, at most
	// Config.MaxLimit.
	Limit int
}

// DeadLetterList is the dead letters of a filter.
type DeadLetterList struct {
	Since    time.Time `json:"since"`
	Consumer string    `json:"consumer"`
	Status   string    `json:"status"`
	// Consumers are the counts of every consumer read, in the window (by
	// status), in the order read.
	Consumers []DeadLetterCount `json:"consumers"`
	// Items are the matching letters, newest first, at most the limit;
	// Total is how many matched.
	Items []DeadLetter `json:"items"`
	Total int          `json:"total"`
}

// DeadLetterCount is one consumer's dead letters in the window.
type DeadLetterCount struct {
	Consumer    string `json:"consumer"`
	Quarantined int    `json:"quarantined"`
	Replayed    int    `json:"replayed"`
}

// DeadLetter is one dead letter as a person reads it: the stored record's
// payload is left out.
type DeadLetter struct {
	Consumer       string    `json:"consumer"`
	Position       string    `json:"position"`
	EventID        string    `json:"eventId"`
	EventName      string    `json:"eventName,omitempty"`
	SequenceNumber string    `json:"sequenceNumber,omitempty"`
	Subject        string    `json:"subject"`
	Reason         string    `json:"reason"`
	Error          string    `json:"error"`
	QuarantinedAt  time.Time `json:"quarantinedAt"`
	Status         string    `json:"status"`
	// Replay is the command that replays this letter ("" when it cannot be
	// replayed: see ReplayNote).
	Replay     string `json:"replay"`
	ReplayNote string `json:"replayNote,omitempty"`
}

// MaxErrorLength bounds DeadLetter.Error (the table keeps the whole text).
const MaxErrorLength = 1000

// check validates f and fills its defaults at now.
func (v *View) check(f Filter, now time.Time) (Filter, error) {
	switch {
	case len(f.Consumer) > MaxConsumerLength:
		return f, &FilterError{"consumer", fmt.Sprintf("must be at most %d characters", MaxConsumerLength)}
	case f.Limit < 0 || f.Limit > v.cfg.MaxLimit:
		return f, &FilterError{"limit", fmt.Sprintf("must be between 1 and %d", v.cfg.MaxLimit)}
	case f.Since.After(now):
		return f, &FilterError{"since", "must not be after now (" + now.Format(time.RFC3339) + ")"}
	}
	switch f.Status {
	case "":
		f.Status = StatusAll
	case StatusAll, deadletter.StatusQuarantined, deadletter.StatusReplayed:
	default:
		return f, &FilterError{"status", fmt.Sprintf("must be %s, %s or %s, got %q", deadletter.StatusQuarantined, deadletter.StatusReplayed, StatusAll, f.Status)}
	}
	if f.Since.IsZero() {
		f.Since = now.Add(-v.cfg.Window)
	}
	f.Limit = cmp.Or(f.Limit, min(DefaultLimit, v.cfg.MaxLimit))
	return f, nil
}

// DeadLetters lists the dead letters of f at now. Without a consumer it
// reads every known consumer's (concurrently), heartbeats included to find
// the consumers.
func (v *View) DeadLetters(ctx context.Context, now time.Time, f Filter) (DeadLetterList, error) {
	now = now.UTC()
	f, err := v.check(f, now)
	if err != nil {
		return DeadLetterList{}, err
	}
	consumers := []string{f.Consumer}
	if f.Consumer == "" {
		if consumers, err = v.deadLetterConsumers(ctx); err != nil {
			return DeadLetterList{}, err
		}
	}
	lists := make([][]deadletter.Letter, len(consumers))
	errs := make([]error, len(consumers))
	var wg sync.WaitGroup
	for i, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], errs[i] = v.cfg.DeadLetters.List(ctx, c)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return DeadLetterList{}, fmt.Errorf("opsview: dead letters: %w", err)
	}
	out := DeadLetterList{Since: f.Since.UTC(), Consumer: f.Consumer, Status: f.Status, Consumers: []DeadLetterCount{}, Items: []DeadLetter{}}
	var match []deadletter.Letter
	for i, c := range consumers {
		n := DeadLetterCount{Consumer: c}
		for _, d := range lists[i] {
			if d.QuarantinedAt.Before(f.Since) {
				continue
			}
			switch d.Status {
			case deadletter.StatusQuarantined:
				n.Quarantined++
			case deadletter.StatusReplayed:
				n.Replayed++
			}
			if f.Status == StatusAll || d.Status == f.Status {
				match = append(match, d)
			}
		}
		out.Consumers = append(out.Consumers, n)
	}
	slices.SortStableFunc(match, func(a, b deadletter.Letter) int {
		return cmp.Or(b.QuarantinedAt.Compare(a.QuarantinedAt), cmp.Compare(a.Consumer, b.Consumer), cmp.Compare(b.Position, a.Position))
	})
	out.Total = len(match)
	for _, d := range match[:min(len(match), f.Limit)] {
		out.Items = append(out.Items, v.letter(d))
	}
	return out, nil
}

// deadLetterConsumers are the consumers read without a filter: the
// configured ones, then those with a heartbeat.
func (v *View) deadLetterConsumers(ctx context.Context) ([]string, error) {
	progs, err := v.cfg.Records.Progresses(ctx)
	if err != nil {
		return nil, fmt.Errorf("opsview: dead letters: %w", err)
	}
	out := slices.Clone(v.cfg.DeadLetterConsumers)
	var more []string
	for _, c := range v.cfg.Consumers {
		more = append(more, c)
	}
	for _, p := range progs {
		more = append(more, p.Consumer)
	}
	slices.Sort(more)
	for _, c := range slices.Compact(more) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// letter renders a dead letter with its subject and replay command.
func (v *View) letter(d deadletter.Letter) DeadLetter {
	msg := d.Error
	if len(msg) > MaxErrorLength {
		msg = strings.ToValidUTF8(msg[:MaxErrorLength], "") + "…"
	}
	out := DeadLetter{
		Consumer: d.Consumer, Position: d.Position, EventID: d.EventID, EventName: d.EventName,
		SequenceNumber: d.SequenceNumber, Subject: Subject(d), Reason: d.Reason, Error: msg,
		QuarantinedAt: d.QuarantinedAt.UTC(), Status: d.Status,
	}
	out.Replay, out.ReplayNote = ReplayCommand(d, v.cfg.Naming)
	return out
}

// Subject is the subject (aggregate) of a dead letter's event, "" when the
// record does not name one: a stream record's key or new image; an ingest
// conflict's refused version. An ingest letter of another reason holds an
// EventBridge event, whose subject is only derived when it is appended.
func Subject(d deadletter.Letter) string {
	if d.Consumer == ingest.DeadLetterConsumer {
		if d.Reason != ingest.ReasonConflict {
			return ""
		}
		c, err := ingest.ParseConflictDeadLetter(d.Record)
		if err != nil {
			return ""
		}
		return c.New.Subject
	}
	rec, err := d.LambdaRecord()
	if err != nil {
		return ""
	}
	for _, img := range []map[string]events.DynamoDBAttributeValue{rec.Change.Keys, rec.Change.NewImage, rec.Change.OldImage} {
		if av, ok := img[schema.AttrSubject]; ok && av.DataType() == events.DataTypeString {
			return av.String()
		}
	}
	return ""
}

// ReplayCommand is the command that replays one dead letter (`streamfold
// deadletter replay`, for its consumer and position, on the deployment of
// n), or "" with the reason when it cannot be replayed: it was replayed
// already, it is a conflict (a person decides), or its consumer is not one
// replay knows. The connection (endpoint, region, credentials) is the
// caller's environment, as for every command.
func ReplayCommand(d deadletter.Letter, n schema.Naming) (cmd, note string) {
	switch {
	case d.Status == deadletter.StatusReplayed:
		return "", "replayed already"
	case d.Consumer == ingest.DeadLetterConsumer && d.Reason == ingest.ReasonConflict:
		return "", "a conflict between two versions of an event is not replayed: a person decides (docs/event-contract.md)"
	case !slices.Contains(DefaultDeadLetterConsumers, d.Consumer):
		return "", "replay knows the consumers projector, archiver and ingest; list them with: " +
			shellJoin("streamfold", "deadletter", "list", "--consumer", d.Consumer, "--prefix", n.Prefix, "--stage", n.Stage)
	}
	return shellJoin("streamfold", "deadletter", "replay", "--consumer", d.Consumer, "--position", d.Position,
		"--prefix", n.Prefix, "--stage", n.Stage), ""
}

// shellJoin joins words into a POSIX shell command line, quoting the words
// that need it.
func shellJoin(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	safe := w != ""
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@,+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
