package redrive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
	"github.com/streamfold/streamfold/toolkit/emit"
)

// NoDeadLetterError is Replay's error when ReplayOptions.Position names no
// dead letter of the consumer.
type NoDeadLetterError struct{ Consumer, Position string }

func (e *NoDeadLetterError) Error() string {
	return fmt.Sprintf("consumer %q has no dead letter at %q", e.Consumer, e.Position)
}

// Letters are one consumer's dead letters, in position order (List).
type Letters struct {
	Consumer string
	// Table is the dead-letter table's name.
	Table   string
	Letters []deadletter.Letter
}

// List reads consumer's dead letters from the dead-letter table of n. Any
// consumer name is listed (an unknown one has none).
func List(ctx context.Context, api deadletter.TableAPI, n schema.Naming, consumer string) (*Letters, error) {
	table := n.Table(schema.TableDeadLetters)
	letters, err := deadletter.NewTable(api, table).List(ctx, consumer)
	if err != nil {
		return nil, err
	}
	return &Letters{Consumer: consumer, Table: table, Letters: letters}, nil
}

// MarshalJSON is the letters as an array, empty rather than null.
func (l Letters) MarshalJSON() ([]byte, error) {
	if l.Letters == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(l.Letters)
}

// WriteText prints the letters as a table (the ingest function's by
// position, which is time#id; the stream consumers' by sequence number) and
// a count line.
func (l Letters) WriteText(w io.Writer) error {
	cols := []string{"SEQUENCE", "EVENT_ID", "STATUS", "REASON", "ERROR"}
	row := func(d deadletter.Letter) []string {
		return []string{d.SequenceNumber, d.EventID, d.Status, d.Reason, d.Error}
	}
	if l.Consumer == Ingest {
		cols = []string{"POSITION", "STATUS", "REASON", "ERROR"}
		row = func(d deadletter.Letter) []string { return []string{d.Position, d.Status, d.Reason, d.Error} }
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, d := range l.Letters {
		fmt.Fprintln(tw, strings.Join(row(d), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d dead letters for consumer %q in %s\n", len(l.Letters), l.Consumer, l.Table)
	return err
}

// ReplayOptions are one replay's settings.
type ReplayOptions struct {
	// Consumer is whose dead letters: Projector, Archiver or Ingest.
	Consumer string
	// Position, when set, replays only the dead letter at this position
	// (as List gives it); empty replays every quarantined one.
	Position string
	// SFNTags is, for Ingest, where state machine tags come from for
	// letters that recorded none (emit.TagSource's spec).
	SFNTags string
	// ArchiveURI is the archiver's archive; empty is the naming's default.
	ArchiveURI string
	// Log receives the handlers' warnings; nil discards them.
	Log *slog.Logger
}

// Validate checks the options; its errors name the field at fault.
func (o *ReplayOptions) Validate() error {
	switch o.Consumer {
	case Projector, Archiver, Ingest:
		return nil
	}
	return toolkit.Invalid("replay", "Consumer", nil, fmt.Sprintf("must be projector, archiver or ingest, got %q", o.Consumer))
}

// ReplayResult is replay's summary. Results, one per quarantined letter in
// position order, is the ingest consumer's only.
type ReplayResult struct {
	Replayed    int
	StillPoison []string
	Failed      []string
	Results     []Replayed
}

// MarshalJSON keeps "results" to the ingest consumer's summary (where it
// is never null).
func (r ReplayResult) MarshalJSON() ([]byte, error) {
	type summary struct {
		Replayed    int      `json:"replayed"`
		StillPoison []string `json:"stillPoison"`
		Failed      []string `json:"failed"`
	}
	s := summary{r.Replayed, r.StillPoison, r.Failed}
	if r.Results == nil {
		return json.Marshal(s)
	}
	return json.Marshal(struct {
		summary
		Results []Replayed `json:"results"`
	}{s, r.Results})
}

// Replay hands each quarantined dead letter of the consumer again to its
// handler and marks the ones handled replayed. The stream consumers'
// letters are decoded first: one still poison stays quarantined
// (StillPoison). The ingest function's are re-submitted through the Step
// Functions adapter (replayIngest). An entry that fails is in Failed. Its
// errors are invalid options, a *NoDeadLetterError, or the services'.
func Replay(ctx context.Context, c *awsclient.Clients, s conn.Settings, o ReplayOptions) (*ReplayResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n, err := s.Naming()
	if err != nil {
		return nil, toolkit.Invalid("replay", "Settings", err, "")
	}
	log := logger(o.Log)
	var tags ingest.TagSource
	var h *handler
	if o.Consumer == Ingest {
		if tags, err = emit.TagSource(o.SFNTags, s.Local(), func() ingest.TagLister { return sfn.NewFromConfig(c.AWS) }); err != nil {
			return nil, toolkit.Invalid("replay", "SFNTags", err, "")
		}
	} else {
		if h, err = openHandler(c, s, n, o.Consumer, o.ArchiveURI, nil, log); err != nil {
			return nil, err
		}
		defer h.close()
	}
	dl := deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters))
	letters, err := dl.List(ctx, o.Consumer)
	if err != nil {
		return nil, err
	}
	if letters, err = atPosition(letters, o.Position, o.Consumer); err != nil {
		return nil, err
	}
	if o.Consumer == Ingest {
		app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents), DeadLetters: dl})
		if err != nil {
			return nil, err
		}
		res := replayIngest(ctx, letters, app, tags, dl, log)
		return &res, nil
	}
	res := replay(ctx, letters, h.handle, o.Consumer, dl)
	return &res, nil
}

// replay hands the quarantined letters to handle, one at a time, and marks
// the ones handled replayed; a letter still poison is not handed over.
func replay(ctx context.Context, letters []deadletter.Letter, handle streamrun.Handler, consumer string, dl marker) ReplayResult {
	res := ReplayResult{StillPoison: []string{}, Failed: []string{}}
	for _, d := range letters {
		if d.Status != deadletter.StatusQuarantined {
			continue
		}
		rec, err := d.LambdaRecord()
		if err != nil {
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
			continue
		}
		if _, _, err := projector.Decode(rec); errors.Is(err, projector.ErrPoison) {
			res.StillPoison = append(res.StillPoison, d.Position+": "+err.Error())
			continue
		}
		resp, err := handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		if err != nil || len(resp.BatchItemFailures) > 0 {
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %s failed (%v)", d.Position, consumer, err))
			continue
		}
		if err := dl.MarkReplayed(ctx, d); err != nil {
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
			continue
		}
		res.Replayed++
	}
	return res
}

// atPosition keeps the letter at position ("" keeps every letter); a
// position no letter has is a *NoDeadLetterError.
func atPosition(letters []deadletter.Letter, position, consumer string) ([]deadletter.Letter, error) {
	if position == "" {
		return letters, nil
	}
	for _, d := range letters {
		if d.Position == position {
			return []deadletter.Letter{d}, nil
		}
	}
	return nil, &NoDeadLetterError{Consumer: consumer, Position: position}
}
