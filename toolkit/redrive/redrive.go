// Package redrive provides the repair workflows of the records a consumer
// could not process: listing and replaying a consumer's dead letters (the
// projector's, the archiver's, the ingest function's), and redriving the
// batches an AWS event source mapping gave up on, from the records its
// on-failure destination kept of them.
//
// Redrive separates deciding from doing: ParseOnFailure and ReadS3 read the
// on-failure records, NewPlan decides where each batch's records come from
// (the record's payload or the stream) and refuses a batch of another
// consumer's function, and Plan.Execute hands the records to the consumer's
// handler as the mapping would. Replay and Redrive are idempotent: the
// projector folds, the archiver rewrites the object of a record's position,
// an event already appended is a duplicate. Neither is safe for concurrent
// use on the same consumer.
package redrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// The consumers whose failures these workflows repair.
const (
	Projector = "projector"
	Archiver  = "archiver"
	// Ingest is the ingest function's: its dead letters are listed and
	// replayed, never redriven.
	Ingest = ingest.DeadLetterConsumer
)

// Options are one redrive's settings.
type Options struct {
	// Consumer is whose batches they are: Projector or Archiver.
	Consumer string
	// Input names the on-failure records: s3://BUCKET/KEY,
	// s3://BUCKET/PREFIX/ (every object under it), a file, or "-" (Stdin).
	Input string
	// Stdin is read when Input is "-".
	Stdin io.Reader
	// DryRun reads the batches and counts their records, handing nothing
	// over.
	DryRun bool
	// ArchiveURI is the archiver's archive, s3://BUCKET/PREFIX; empty is
	// the naming's default (conn.DefaultArchive).
	ArchiveURI string
	// Log receives the handlers' warnings; nil discards them.
	Log *slog.Logger
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	if o.Consumer != Projector && o.Consumer != Archiver {
		return toolkit.Invalid("redrive", "Consumer", nil, fmt.Sprintf("must be projector or archiver (the ingest function's failures are dead letters: use list and replay), got %q", o.Consumer))
	}
	if o.Input == "" {
		return toolkit.Invalid("redrive", "Input", nil, "required: a file (- for standard input), s3://BUCKET/KEY or s3://BUCKET/PREFIX/")
	}
	return nil
}

// Read reads the on-failure records o.Input names. A file that cannot be
// opened or read as on-failure records is an invalid Input; an S3 object
// that cannot be read is a service error.
func Read(ctx context.Context, objects ObjectsAPI, o Options) ([]Batch, error) {
	if strings.HasPrefix(o.Input, "s3://") {
		return ReadS3(ctx, objects, o.Input)
	}
	in := o.Stdin
	if o.Input != "-" {
		f, err := os.Open(o.Input)
		if err != nil {
			return nil, toolkit.Invalid("redrive", "Input", err, "")
		}
		defer f.Close()
		in = f
	}
	batches, err := ParseOnFailure(in)
	if err != nil {
		return nil, toolkit.Invalid("redrive", "Input", err, o.Input)
	}
	return batches, nil
}

// Step is what a plan does with one batch.
type Step struct {
	Batch Batch
	// Source is where its records come from: "payload" (the records the
	// S3 on-failure object carried) or "stream" (read by the range).
	Source string
}

// Plan is a redrive decided: which batches go to which consumer, from
// where. Execute does it.
type Plan struct {
	Consumer string
	DryRun   bool
	Steps    []Step
}

// NewPlan plans the redrive of batches to consumer. Both consumers'
// mappings write to one on-failure bucket, so a batch that failed in
// another function is refused (an invalid Input): it must never be handed
// to this consumer.
func NewPlan(consumer string, batches []Batch, dryRun bool) (Plan, error) {
	p := Plan{Consumer: consumer, DryRun: dryRun, Steps: make([]Step, 0, len(batches))}
	for _, b := range batches {
		if b.Function != "" && !strings.HasSuffix(b.Function, "-"+consumer) {
			return Plan{}, toolkit.Invalid("redrive", "Input", nil, fmt.Sprintf("%s: the batch failed in function %s, not in the %s (Consumer %s); redrive it with the consumer of that function", b.Where, b.Function, consumer, consumer))
		}
		src := "stream"
		if b.Records != nil {
			src = "payload" // the stream, and its 24 h, are not needed
		}
		p.Steps = append(p.Steps, Step{Batch: b, Source: src})
	}
	return p, nil
}

// Run reads the on-failure records, plans their redrive and executes it
// with the consumer's handler on the tables of s. Its errors are invalid
// options (*toolkit.OptionsError) or the services'; what happened to each
// batch is in the result.
func Run(ctx context.Context, c *awsclient.Clients, s conn.Settings, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	n, err := s.Naming()
	if err != nil {
		return nil, toolkit.Invalid("redrive", "Settings", err, "")
	}
	batches, err := Read(ctx, c.S3, o)
	if err != nil {
		return nil, err
	}
	plan, err := NewPlan(o.Consumer, batches, o.DryRun)
	if err != nil {
		return nil, err
	}
	log := logger(o.Log)
	// Every batch handed over is marked (opswatch.WithRedrive): the
	// consumer's handler records one GapOnFailure per failed batch, which
	// reconcile reads. Only the marked batches are looked at (no heartbeat).
	watch, err := opswatch.New(opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)},
		opswatch.Config{Consumer: o.Consumer, HeartbeatInterval: -1, Logger: log})
	if err != nil {
		return nil, err
	}
	h, err := openHandler(c, s, n, o.Consumer, o.ArchiveURI, watch, log)
	if err != nil {
		return nil, err
	}
	defer h.close()
	res := plan.Execute(ctx, c.Streams, h.handle, log)
	return &res, nil
}

// Result is redrive's JSON summary.
type Result struct {
	Consumer string        `json:"consumer"`
	DryRun   bool          `json:"dryRun,omitempty"`
	Batches  []BatchResult `json:"batches"`
	Totals   Totals        `json:"totals"`
}

// BatchResult is what happened to one batch.
type BatchResult struct {
	Where     string `json:"where"`
	Shard     string `json:"shardId"`
	Start     string `json:"startSequenceNumber"`
	End       string `json:"endSequenceNumber"`
	BatchSize int    `json:"batchSize"`
	// Source: "payload" (the records the S3 on-failure object carried) or
	// "stream" (read from the stream by the range).
	Source   string `json:"source"`
	Read     int    `json:"read"`
	Redriven int    `json:"redriven"`
	// Outcome: "redriven", "read" (dry run), "trimmed", "incomplete" or "failed".
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

// Totals count the batches by outcome and their records.
type Totals struct {
	Batches    int `json:"batches"`
	Read       int `json:"read"`
	Redriven   int `json:"redriven"`
	Trimmed    int `json:"trimmed"`
	Incomplete int `json:"incomplete"`
	Failed     int `json:"failed"`
}

// WriteErrors prints one line per batch that did not go through.
func (r Result) WriteErrors(w io.Writer, prefix string) {
	for _, b := range r.Batches {
		if b.Error != "" {
			fmt.Fprintf(w, "%s: %s (shard %s, %s..%s): %s: %s\n", prefix, b.Where, b.Shard, b.Start, b.End, b.Outcome, b.Error)
		}
	}
}

// Attempts bounds the handler calls per batch of records (its first
// attempt and its retries; a retry that makes progress starts a new
// count): a batch that still fails after them fails its on-failure batch.
const Attempts = 5

// delivery hands records to the consumer's handler as the event source
// mapping would (streamrun.Delivery, the runner's delivery): in batches of
// the mapping's default size, resuming at the lowest record the handler
// reports failed, retrying with the runner's backoff. There is no
// on-failure destination: a batch that exhausts its attempts stops the
// redrive of its on-failure batch, which is reported "failed".
func delivery(handle streamrun.Handler, log *slog.Logger) *streamrun.Delivery {
	return &streamrun.Delivery{Handler: handle, BatchSize: streamrun.DefaultBatchSize, MaxRetryAttempts: Attempts - 1, Logger: log}
}

// markRedrive hands every batch of one failed batch to handle marked as
// redriven (opswatch.WithRedrive, one mark per failed batch): the
// consumer's handler records one GapOnFailure for it, with its shard and
// range and the records' creation times.
func markRedrive(handle streamrun.Handler, b Batch, recs []events.DynamoDBEventRecord) streamrun.Handler {
	mark := &opswatch.Redrive{Source: b.Where, Shard: b.Range.ShardID, FirstSeq: b.Range.Start, LastSeq: b.Range.End, Records: len(recs)}
	mark.From, mark.To = opswatch.CreatedSpan(recs)
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return handle(opswatch.WithRedrive(ctx, mark), ev)
	}
}

// Execute takes each batch's records from its on-failure record (S3) or
// reads them from streams (SQS/SNS) and hands them to handle, as the event
// source mapping would. streams is not called for a plan of payloads only.
func (p Plan) Execute(ctx context.Context, streams streamrun.StreamsAPI, handle streamrun.Handler, log *slog.Logger) Result {
	res := Result{Consumer: p.Consumer, DryRun: p.DryRun, Batches: []BatchResult{}}
	for _, s := range p.Steps {
		b := s.Batch
		rb := BatchResult{Where: b.Where, Shard: b.Range.ShardID, Start: b.Range.Start, End: b.Range.End, BatchSize: b.BatchSize, Source: s.Source}
		recs, err := b.Records, error(nil)
		if s.Source == "stream" {
			recs, err = streamrun.ReadRange(ctx, streams, b.Range)
		}
		rb.Read = len(recs)
		switch {
		case errors.Is(err, streamrun.ErrTrimmed):
			rb.Outcome, rb.Error = "trimmed", err.Error()+"; the events are still in the event table for 14 days and in the archive: rebuild the projections from the archive (streamfold rebuild --from-archive ... --into in-place)"
		case errors.Is(err, streamrun.ErrRangeIncomplete) && len(recs) == 0:
			rb.Outcome, rb.Error = "incomplete", err.Error()
		case err != nil && !errors.Is(err, streamrun.ErrRangeIncomplete):
			rb.Outcome, rb.Error = "failed", err.Error()
		case p.DryRun:
			rb.Outcome = "read"
			if err != nil {
				rb.Outcome, rb.Error = "incomplete", err.Error()
			}
		default:
			n, herr := delivery(markRedrive(handle, b, recs), logger(log)).Deliver(ctx, recs)
			rb.Redriven = n
			switch {
			case herr != nil:
				rb.Outcome, rb.Error = "failed", herr.Error()
			case err != nil:
				rb.Outcome, rb.Error = "incomplete", err.Error()
			default:
				rb.Outcome = "redriven"
			}
		}
		res.Totals.add(rb)
		res.Batches = append(res.Batches, rb)
	}
	return res
}

func (t *Totals) add(b BatchResult) {
	t.Batches++
	t.Read += b.Read
	t.Redriven += b.Redriven
	switch b.Outcome {
	case "trimmed":
		t.Trimmed++
	case "incomplete":
		t.Incomplete++
	case "failed":
		t.Failed++
	}
}

// handler is a consumer's handler, wired to one set of tables.
type handler struct {
	handle streamrun.Handler
	close  func() error
}

// openHandler wires consumer's handler to the tables of n: the projector
// (quarantining into the dead-letter table) or the archiver (writing the
// archive at archiveURI). watch, when not nil, is handed each batch.
func openHandler(c *awsclient.Clients, s conn.Settings, n schema.Naming, consumer, archiveURI string, watch *opswatch.Watch, log *slog.Logger) (*handler, error) {
	switch consumer {
	case Projector:
		shards, err := s.Shards()
		if err != nil {
			return nil, toolkit.Invalid(consumer, "Settings", err, "")
		}
		store, err := projector.NewDynamoStore(c.DynamoDB, n)
		if err != nil {
			return nil, err
		}
		p, err := projector.New(store, projector.Config{GSIShards: shards})
		if err != nil {
			return nil, err
		}
		dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
		h := projector.NewHandler(p, dl, projector.HandlerConfig{Consumer: consumer, Watch: watch}, log)
		return &handler{handle: h.Handle, close: func() error { return nil }}, nil
	case Archiver:
		a, err := s.OpenArchive(c, n, archiveURI)
		if err != nil {
			return nil, toolkit.Invalid(consumer, "ArchiveURI", err, "")
		}
		return &handler{handle: archiver.NewHandler(a, log).Watch(watch).Handle, close: a.Close}, nil
	}
	return nil, toolkit.Invalid("replay", "Consumer", nil, fmt.Sprintf("must be projector, archiver or ingest, got %q", consumer))
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
