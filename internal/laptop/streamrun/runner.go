package streamrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/periodic"
	"github.com/streamfold/streamfold/internal/retry"
)

// StreamsAPI is the part of the DynamoDB Streams client a Runner uses;
// *dynamodbstreams.Client satisfies it.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// describePageSize is DynamoDB Streams' maximum shards per DescribeStream.
const describePageSize = 100

// Runner reads a stream with the semantics of Lambda's event source
// mapping. See the package documentation for the contract.
type Runner struct {
	api StreamsAPI
	cps CheckpointStore
	h   Handler
	cfg Config
	log *slog.Logger

	// Tuning, replaced by tests.
	retryBase, retryMax time.Duration // backoff of handler retries and transient errors
	iteratorMaxAge      time.Duration // re-acquire an iterator older than this
	now                 func() time.Time

	running atomic.Bool

	batches, records, retries, bisections, poisoned, expired, trimmed, lagMillis, gaps atomic.Int64

	mu                     sync.Mutex
	shardsOpen, shardsDone int
}

// New returns a Runner; cfg gets its defaults and is validated.
func New(api StreamsAPI, cps CheckpointStore, h Handler, cfg Config) (*Runner, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case api == nil:
		return nil, errors.New("streamrun: New: StreamsAPI is required")
	case cps == nil:
		return nil, errors.New("streamrun: New: CheckpointStore is required")
	case h == nil:
		return nil, errors.New("streamrun: New: Handler is required")
	}
	return &Runner{
		api: api, cps: cps, h: h, cfg: cfg,
		log:            cfg.Logger.With("component", "streamrun", "consumer", cfg.Consumer),
		retryBase:      DefaultRetryBase,
		retryMax:       DefaultRetryMax,
		iteratorMaxAge: 14 * time.Minute,
		now:            time.Now,
	}, nil
}

// Stats returns the counters so far; safe to call at any time.
func (r *Runner) Stats() Stats {
	r.mu.Lock()
	open, done := r.shardsOpen, r.shardsDone
	r.mu.Unlock()
	return Stats{
		Batches:          r.batches.Load(),
		Records:          r.records.Load(),
		Retries:          r.retries.Load(),
		Bisections:       r.bisections.Load(),
		Poisoned:         r.poisoned.Load(),
		ExpiredIterators: r.expired.Load(),
		Trimmed:          r.trimmed.Load(),
		Gaps:             r.gaps.Load(),
		ShardsOpen:       open,
		ShardsDone:       done,
		LagMillis:        r.lagMillis.Load(),
	}
}

// Run reads the stream until ctx is done (it then returns nil) or, with
// UntilCaughtUp, until every shard is drained. It returns an error when
// the stream cannot be read (other than transiently), a checkpoint cannot
// be saved, or OnPoison fails. A Runner runs once at a time.
func (r *Runner) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("streamrun: Run: already running")
	}
	defer r.running.Store(false)

	var err error
	if r.cfg.Progress == nil {
		err = r.run(ctx)
	} else {
		stop := periodic.Start(time.Second, func() { r.cfg.Progress(r.Stats()) })
		err = r.run(ctx)
		stop()
		r.cfg.Progress(r.Stats())
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

type shardStatus int

const (
	idle    shardStatus = iota // not started (maybe waiting for its parent)
	reading                    // a worker runs
	done                       // closed and fully read
	drained                    // UntilCaughtUp: at its tip, not read again in this Run
)

type shardState struct {
	id, parent string
	closed     bool // has an EndingSequenceNumber
	inDesc     bool // in the last description
	status     shardStatus
	cp         Checkpoint
	// latest: start at LATEST (Config.StartingPosition, no checkpoint).
	latest bool
	// beat is the consumer's last heartbeat on the shard, read when its
	// checkpoint was not saved by a Runner (nil otherwise).
	beat *opsrec.Progress
}

type workerResult struct {
	shard  string
	status shardStatus
	err    error
}

func (r *Runner) run(ctx context.Context) error {
	cps, err := r.loadCheckpoints(ctx)
	if err != nil {
		return err
	}
	beats := r.loadBeats(ctx, cps)
	initial := true
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	results := make(chan workerResult)
	shards := map[string]*shardState{}
	running := 0
	describeFailures := 0
	describeNow := true
	timer := time.NewTimer(0)
	defer timer.Stop()

	for {
		if describeNow {
			describeNow = false
			desc, err := r.describe(ctx)
			switch {
			case err != nil && ctx.Err() != nil:
				return ctx.Err()
			case err != nil && transient(err):
				describeFailures++
				d := r.backoff(describeFailures)
				r.log.Warn("streamrun: DescribeStream failed, retrying", "err", err, "in", d)
				timer.Reset(d)
			case err != nil:
				return fmt.Errorf("streamrun: describe stream %s: %w", r.cfg.StreamARN, err)
			default:
				describeFailures = 0
				r.merge(shards, desc, cps, beats, initial)
				initial = false
				for _, s := range r.startable(shards) {
					s.status = reading
					running++
					w := r.newWorker(s)
					wg.Add(1)
					go func() {
						defer wg.Done()
						st, err := w.run(wctx)
						select {
						case results <- workerResult{shard: w.id, status: st, err: err}:
						case <-wctx.Done():
						}
					}()
				}
				r.countShards(shards)
				if r.cfg.UntilCaughtUp && running == 0 {
					r.log.Info("streamrun: caught up", "shards_done", r.Stats().ShardsDone)
					return nil
				}
				timer.Reset(r.cfg.DescribeInterval)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case res := <-results:
			running--
			if res.err != nil {
				return res.err
			}
			if s := shards[res.shard]; s != nil {
				s.status = res.status
				if res.status == done {
					s.cp.Done = true
				}
			}
			// A finished shard may free its children; an UntilCaughtUp run
			// may be over: look again now.
			timer.Stop()
			describeNow = true
		case <-timer.C:
			describeNow = true
		}
	}
}

func (r *Runner) loadCheckpoints(ctx context.Context) (map[string]Checkpoint, error) {
	for attempt := 1; ; attempt++ {
		cps, err := r.cps.Load(ctx, r.cfg.Consumer)
		if err == nil {
			return cps, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !transient(err) {
			return nil, err
		}
		d := r.backoff(attempt)
		r.log.Warn("streamrun: loading checkpoints failed, retrying", "err", err, "in", d)
		if err := retry.Sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

// loadBeats returns the consumer's last heartbeats by shard when a
// checkpoint was not saved by a Runner (it has a SequenceNumber but no
// RunnerSeq): a worker compares such a checkpoint with its shard's last
// heartbeat. Nil otherwise, or without Ops; a failure is logged only.
func (r *Runner) loadBeats(ctx context.Context, cps map[string]Checkpoint) map[string]opsrec.Progress {
	if r.cfg.Ops == nil {
		return nil
	}
	need := false
	for _, cp := range cps {
		need = need || (cp.SequenceNumber != "" && cp.RunnerSeq == "" && !cp.Done)
	}
	if !need {
		return nil
	}
	all, err := r.cfg.Ops.Progresses(ctx)
	if err != nil {
		r.log.Warn("streamrun: reading the heartbeats failed: checkpoints not saved by a runner are not checked", "err", err)
		return nil
	}
	out := map[string]opsrec.Progress{}
	for _, p := range all {
		if p.Consumer == r.cfg.Consumer {
			out[p.Shard] = p
		}
	}
	return out
}

// describe returns every shard of the stream, following the pagination.
func (r *Runner) describe(ctx context.Context) ([]stypes.Shard, error) {
	var out []stypes.Shard
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.cfg.StreamARN), Limit: aws.Int32(describePageSize)}
	for {
		res, err := r.api.DescribeStream(ctx, in)
		if err != nil {
			return nil, err
		}
		if res.StreamDescription == nil {
			return out, nil
		}
		out = append(out, res.StreamDescription.Shards...)
		last := aws.ToString(res.StreamDescription.LastEvaluatedShardId)
		if last == "" {
			return out, nil
		}
		in.ExclusiveStartShardId = aws.String(last)
	}
}

// merge folds a description into the known shards. In the initial
// description, with StartingPosition Latest, a shard without a checkpoint
// whose parent has none either starts at LATEST.
func (r *Runner) merge(shards map[string]*shardState, desc []stypes.Shard, cps map[string]Checkpoint, beats map[string]opsrec.Progress, initial bool) {
	for _, s := range shards {
		s.inDesc = false
	}
	for _, d := range desc {
		id := aws.ToString(d.ShardId)
		s := shards[id]
		if s == nil {
			s = &shardState{id: id, cp: Checkpoint{ShardID: id}}
			if cp, ok := cps[id]; ok {
				s.cp = cp
				if cp.Done {
					s.status = done
				}
				if b, ok := beats[id]; ok {
					s.beat = &b
				}
			} else if _, parentRead := cps[aws.ToString(d.ParentShardId)]; initial && r.cfg.StartingPosition == Latest && !parentRead {
				s.latest = true
			}
			shards[id] = s
		}
		s.inDesc = true
		s.parent = aws.ToString(d.ParentShardId)
		s.closed = d.SequenceNumberRange != nil && aws.ToString(d.SequenceNumberRange.EndingSequenceNumber) != ""
	}
}

// startable returns the idle shards whose parent is done or gone.
func (r *Runner) startable(shards map[string]*shardState) []*shardState {
	var out []*shardState
	for _, s := range shards {
		if s.status != idle || !s.inDesc {
			continue
		}
		if p := shards[s.parent]; s.parent != "" && p != nil && p.inDesc && p.status != done {
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r *Runner) countShards(shards map[string]*shardState) {
	open, fin := 0, 0
	for _, s := range shards {
		switch {
		case !s.inDesc:
		case s.status == done:
			fin++
		default:
			open++
		}
	}
	r.mu.Lock()
	r.shardsOpen, r.shardsDone = open, fin
	r.mu.Unlock()
}

// backoff is jittered exponential backoff for the attempt-th failure:
// between half and all of retry.Exp(retryBase, retryMax, attempt).
func (r *Runner) backoff(attempt int) time.Duration {
	return retry.Half(r.retryBase, r.retryMax, attempt)
}
