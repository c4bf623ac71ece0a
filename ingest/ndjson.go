package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// ErrSkippedNonAgent is returned by DecodeLine for a Step Functions event
// whose state machine is not an agent (seed 002's tag rule): it is not an
// error in the input, and nothing is appended for it.
var ErrSkippedNonAgent = errors.New("ingest: state machine is not an agent; event skipped")

// ErrNoTagSource is returned for a native Step Functions line when no tag
// source was configured to apply the agent rule.
var ErrNoTagSource = errors.New("ingest: native Step Functions event needs state machine tags (configure a tag source)")

// LineShape is the shape of one NDJSON input line.
type LineShape int

// The shapes DecodeLine accepts.
const (
	ShapeEnvelope       LineShape = iota + 1 // a CloudEvents envelope as schema.Event
	ShapeGitHubDelivery                      // {"headers":{...},"body":{...}}
	ShapeEventBridge                         // a native EventBridge event with "detail-type"
)

type lineProbe struct {
	Headers    json.RawMessage `json:"headers"`
	Body       json.RawMessage `json:"body"`
	DetailType *string         `json:"detail-type"`
}

// Shape tells which of the accepted shapes a line has.
func Shape(line []byte) (LineShape, error) {
	var p lineProbe
	if err := json.Unmarshal(line, &p); err != nil {
		return 0, fmt.Errorf("not a JSON object: %s", jsonText(err))
	}
	switch {
	case p.Headers != nil && p.Body != nil:
		return ShapeGitHubDelivery, nil
	case p.DetailType != nil:
		return ShapeEventBridge, nil
	default:
		return ShapeEnvelope, nil
	}
}

// DecodeLine turns one NDJSON line into a validated envelope. A line is an
// envelope, a GitHub webhook delivery or a native EventBridge Step Functions
// event; the last needs tags (nil gives ErrNoTagSource) and yields
// ErrSkippedNonAgent for non-agent state machines. Validation errors are
// *schema.ValidationError values naming the field.
func DecodeLine(ctx context.Context, line []byte, tags TagSource, payloads PayloadPolicy, receivedAt time.Time) (schema.Event, error) {
	shape, err := Shape(line)
	if err != nil {
		return schema.Event{}, err
	}
	switch shape {
	case ShapeGitHubDelivery:
		var d GitHubDelivery
		if err := json.Unmarshal(line, &d); err != nil {
			return schema.Event{}, fmt.Errorf("GitHub delivery: %s", jsonText(err))
		}
		return FromGitHubDelivery(d, receivedAt)
	case ShapeEventBridge:
		var ev EventBridgeEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return schema.Event{}, fmt.Errorf("EventBridge event: %s", jsonText(err))
		}
		if tags == nil {
			return schema.Event{}, ErrNoTagSource
		}
		var arn struct {
			StateMachineArn string `json:"stateMachineArn"`
		}
		_ = json.Unmarshal(ev.Detail, &arn)
		if arn.StateMachineArn == "" {
			return schema.Event{}, &schema.ValidationError{Errors: []*schema.FieldError{{Field: "detail.stateMachineArn", Rule: "is required"}}}
		}
		tm, err := tags.Tags(ctx, arn.StateMachineArn)
		if err != nil {
			return schema.Event{}, fmt.Errorf("state machine tags of %s: %w", arn.StateMachineArn, err)
		}
		if !schema.IsAgent(tm) {
			return schema.Event{}, ErrSkippedNonAgent
		}
		return FromEventBridge(ev, tm, payloads)
	default:
		var e schema.Event
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return schema.Event{}, fmt.Errorf("envelope: %s", jsonText(err))
		}
		if err := Prepare(&e); err != nil {
			return schema.Event{}, err
		}
		return e, nil
	}
}

func jsonText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s: must be a JSON %s, got %s", te.Field, strings.TrimPrefix(te.Type.Kind().String(), "*"), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(err.Error(), "json: "))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// LineError is a rejected input line.
type LineError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// EmitSummary is what Emit reports, as `streamfold emit` prints it.
type EmitSummary struct {
	Accepted   int         `json:"accepted"`
	Duplicates int         `json:"duplicates"`
	Skipped    int         `json:"skipped"`
	Rejected   []LineError `json:"rejected"`
	// Conflicts are the lines whose event's (subject, id) is stored with
	// different content (ErrConflict): not written, kept in the dead
	// letters.
	Conflicts []LineError `json:"conflicts"`
	Failed    []LineError `json:"failed,omitempty"`
}

// EmitConfig configures Emit.
type EmitConfig struct {
	// BatchLines is how many lines go to one Append call. Default 500.
	BatchLines int
	// MaxLineBytes bounds one line. Default 4 MiB.
	MaxLineBytes int
	// Tags resolves state machine tags for native Step Functions lines; nil
	// rejects such lines.
	Tags TagSource
	// StepFunctionsPayloads is what becomes of the input, output and cause
	// of native Step Functions lines (PayloadPolicy; default hash).
	StepFunctionsPayloads PayloadPolicy
	// Now stamps received time for deliveries that lack one. Default time.Now.
	Now func() time.Time
	// Progress, when set, is called after each batch with lines read so far.
	Progress func(lines int, s *EmitSummary)
}

// appendAPI is what Emit needs of an Appender.
type appendAPI interface {
	Append(ctx context.Context, events []schema.Event) (Result, error)
}

// Emit reads NDJSON from r, decodes each non-blank line with DecodeLine and
// appends the valid ones in batches. Invalid lines are reported by number
// (1-based) and never stop the run. The error is non-nil only for a read
// failure or a cancelled context; write failures are listed in Failed.
func Emit(ctx context.Context, r io.Reader, a appendAPI, cfg EmitConfig) (*EmitSummary, error) {
	if cfg.BatchLines <= 0 {
		cfg.BatchLines = 500
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = 4 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	sum := &EmitSummary{Rejected: []LineError{}, Conflicts: []LineError{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), cfg.MaxLineBytes)
	var batch []schema.Event
	var lines []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := a.Append(ctx, batch)
		for i, o := range res.Outcomes {
			switch o {
			case Accepted:
				sum.Accepted++
			case Duplicate:
				sum.Duplicates++
			case Rejected:
				sum.Rejected = append(sum.Rejected, LineError{Line: lines[i], Error: res.Errors[i].Error()})
			case Conflict:
				sum.Conflicts = append(sum.Conflicts, LineError{Line: lines[i], Error: res.Errors[i].Error()})
			case Failed:
				sum.Failed = append(sum.Failed, LineError{Line: lines[i], Error: res.Errors[i].Error()})
			}
		}
		batch, lines = batch[:0], lines[:0]
		if ctx.Err() != nil {
			return err
		}
		return nil
	}
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		e, err := DecodeLine(ctx, line, cfg.Tags, cfg.StepFunctionsPayloads, cfg.Now())
		switch {
		case errors.Is(err, ErrSkippedNonAgent):
			sum.Skipped++
			continue
		case err != nil:
			sum.Rejected = append(sum.Rejected, LineError{Line: n, Error: err.Error()})
			continue
		}
		batch = append(batch, e)
		lines = append(lines, n)
		if len(batch) >= cfg.BatchLines {
			if err := flush(); err != nil {
				return sum, err
			}
			if cfg.Progress != nil {
				cfg.Progress(n, sum)
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sum, fmt.Errorf("ingest: line %d: longer than %d bytes", n+1, cfg.MaxLineBytes)
		}
		return sum, fmt.Errorf("ingest: read input: %w", err)
	}
	if err := flush(); err != nil {
		return sum, err
	}
	if cfg.Progress != nil {
		cfg.Progress(n, sum)
	}
	return sum, nil
}
