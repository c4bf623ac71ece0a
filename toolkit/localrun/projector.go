package localrun

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Projector is the projector wired to one set of tables, as its Lambda
// function runs it: its handler dead-letters poison records under its
// consumer's name.
type Projector struct {
	Handler     *projector.Handler
	DeadLetters *projector.DeadLetters
	Store       *projector.DynamoStore
	// StreamARN is the event table's stream.
	StreamARN string
}

// NewProjector wires the projector to n's tables through ddb (a metered
// client under Run, so that its calls count to the projector). tally,
// when not nil, counts the records its handler dead-letters; watch, when
// not nil, is handed each batch (deadletter redrive marks the batches it
// redrives; Run passes nil, its runner notices gaps itself).
func NewProjector(ctx context.Context, ddb *dynamodb.Client, n schema.Naming, pcfg projector.Config, consumer string, tally *QuarantineTally, watch *opswatch.Watch, log *slog.Logger) (*Projector, error) {
	store, err := projector.NewDynamoStore(ddb, n)
	if err != nil {
		return nil, err
	}
	p, err := projector.New(store, pcfg)
	if err != nil {
		return nil, err
	}
	dl := projector.NewDeadLetters(ddb, n.Table(schema.TableDeadLetters))
	d, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n.Table(schema.TableEvents))})
	if err != nil {
		return nil, fmt.Errorf("describe event table %s: %w", n.Table(schema.TableEvents), err)
	}
	arn := aws.ToString(d.Table.LatestStreamArn)
	if arn == "" {
		return nil, fmt.Errorf("event table %s has no stream", n.Table(schema.TableEvents))
	}
	var put deadletter.Putter = dl
	if tally != nil {
		put = tally.Putter(dl)
	}
	h := projector.NewHandler(p, put, projector.HandlerConfig{Consumer: consumer, Watch: watch}, log)
	return &Projector{Handler: h, DeadLetters: dl, Store: store, StreamARN: arn}, nil
}

// QuarantineTally counts the distinct stream records (by position, the
// sequence number and eventID) a consumer quarantined: a record
// quarantined again, on a retry of its batch, counts once. It is safe for
// concurrent use.
type QuarantineTally struct {
	mu   sync.Mutex
	seen map[string]bool
}

// NewQuarantineTally is an empty tally.
func NewQuarantineTally() *QuarantineTally { return &QuarantineTally{seen: map[string]bool{}} }

// Note counts rec.
func (q *QuarantineTally) Note(rec events.DynamoDBEventRecord) {
	q.noteAt(rec.Change.SequenceNumber, rec.EventID)
}

func (q *QuarantineTally) noteAt(seq, eventID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seen[deadletter.Position(seq, eventID)] = true
}

// N is how many records were counted.
func (q *QuarantineTally) N() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(len(q.seen))
}

// Putter counts every dead letter put stores.
func (q *QuarantineTally) Putter(put deadletter.Putter) deadletter.Putter {
	return tallyPutter{put: put, q: q}
}

// OnPoison counts every record fn (a streamrun OnPoison) stored.
func (q *QuarantineTally) OnPoison(fn func(context.Context, events.DynamoDBEventRecord, error) error) func(context.Context, events.DynamoDBEventRecord, error) error {
	return func(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
		if err := fn(ctx, rec, cause); err != nil {
			return err
		}
		q.Note(rec)
		return nil
	}
}

type tallyPutter struct {
	put deadletter.Putter
	q   *QuarantineTally
}

func (t tallyPutter) Put(ctx context.Context, d deadletter.Letter) error {
	if err := t.put.Put(ctx, d); err != nil {
		return err
	}
	t.q.noteAt(d.SequenceNumber, d.EventID)
	return nil
}

// StopOnPermanent is a streamrun handler running process (a handler that
// also returns why a batch failed): a permanent cause (streamrun.IsPermanent,
// such as an archive that is gone) is returned, so that the runner stops
// with it rather than retry what no retry can fix; any other failure is
// only the response's, retried as Lambda would.
func StopOnPermanent(process streamrun.Handler) streamrun.Handler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		resp, err := process(ctx, ev)
		if streamrun.IsPermanent(err) {
			return resp, err
		}
		return resp, nil
	}
}
