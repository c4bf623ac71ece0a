package opsview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

// Records is what a View reads of the operations records; opsrec.Store
// satisfies it.
type Records interface {
	Progresses(ctx context.Context) ([]opsrec.Progress, error)
	LastResult(ctx context.Context) (opsrec.Result, bool, error)
	Gaps(ctx context.Context, since time.Time) ([]opsrec.Gap, error)
}

// DeadLetters is what a View reads of the dead-letter table;
// *deadletter.Table satisfies it.
type DeadLetters interface {
	List(ctx context.Context, consumer string) ([]deadletter.Letter, error)
}

// Defaults of Config.
const (
	DefaultStaleAfter   = 10 * time.Minute
	DefaultShardHistory = 24 * time.Hour
	DefaultWindow       = 7 * 24 * time.Hour
	DefaultLimit        = 50
	DefaultMaxLimit     = 200
	DefaultMaxGaps      = 100
)

// DefaultConsumers are the stream consumers expected to write heartbeats.
var DefaultConsumers = []string{"projector", "archiver"}

// DefaultDeadLetterConsumers are the consumers whose dead letters the view
// lists when no consumer is asked for ("ingest" writes dead letters but no
// heartbeat).
var DefaultDeadLetterConsumers = []string{"projector", "archiver", "ingest"}

// Config configures a View.
type Config struct {
	// Records reads heartbeats, gaps and reconcile results. Required.
	Records Records
	// DeadLetters reads the dead-letter table. Required.
	DeadLetters DeadLetters
	// Naming is the deployment's naming, written into the replay commands
	// (--prefix, --stage). Required.
	Naming schema.Naming
	// Consumers are the stream consumers listed even without a heartbeat.
	// Default DefaultConsumers.
	Consumers []string
	// DeadLetterConsumers are the consumers whose dead letters are listed
	// when the filter names none (with Consumers and every consumer that
	// wrote a heartbeat). Default DefaultDeadLetterConsumers.
	DeadLetterConsumers []string
	// StaleAfter is the age past which a heartbeat is stale. Default
	// DefaultStaleAfter.
	StaleAfter time.Duration
	// ShardHistory is how far back shards are listed. Default
	// DefaultShardHistory (a stream keeps records 24 hours).
	ShardHistory time.Duration
	// Window is how far back gaps are listed, and the dead letters by
	// default. Default DefaultWindow (7 days).
	Window time.Duration
	// MaxLimit is the largest Filter.Limit. Default DefaultMaxLimit.
	MaxLimit int
	// MaxGaps bounds the gaps listed (the newest). Default DefaultMaxGaps.
	MaxGaps int
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.Consumers == nil {
		c.Consumers = DefaultConsumers
	}
	if c.DeadLetterConsumers == nil {
		c.DeadLetterConsumers = DefaultDeadLetterConsumers
	}
	c.StaleAfter = cmp.Or(c.StaleAfter, DefaultStaleAfter)
	c.ShardHistory = cmp.Or(c.ShardHistory, DefaultShardHistory)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.MaxLimit = cmp.Or(c.MaxLimit, DefaultMaxLimit)
	c.MaxGaps = cmp.Or(c.MaxGaps, DefaultMaxGaps)
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Records == nil:
		return errors.New("opsview: Config.Records: is required")
	case c.DeadLetters == nil:
		return errors.New("opsview: Config.DeadLetters: is required")
	case c.StaleAfter < 0 || c.ShardHistory < 0 || c.Window < 0:
		return errors.New("opsview: Config.StaleAfter, ShardHistory and Window: must not be negative")
	case c.MaxLimit < 0 || c.MaxGaps < 0:
		return errors.New("opsview: Config.MaxLimit and MaxGaps: must not be negative")
	}
	if err := c.Naming.Validate(); err != nil {
		return fmt.Errorf("opsview: Config.Naming: %w", err)
	}
	return nil
}

// View answers the operations view.
type View struct {
	cfg Config
}

// New returns a View.
func New(cfg Config) (*View, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &View{cfg: cfg}, nil
}

// Overview is the operations page's summary.
type Overview struct {
	// Now is the clock the answer was computed on.
	Now time.Time `json:"now"`
	// StaleAfterSeconds is the heartbeat age past which a consumer is stale.
	StaleAfterSeconds float64          `json:"staleAfterSeconds"`
	Consumers         []ConsumerStatus `json:"consumers"`
	// LastReconcile is the newest reconcile run; null when none ran.
	LastReconcile *Reconcile `json:"lastReconcile"`
	// Gaps are the gaps noticed since GapsSince, newest first, at most
	// Config.MaxGaps (GapsTruncated when there were more).
	GapsSince     time.Time    `json:"gapsSince"`
	Gaps          []opsrec.Gap `json:"gaps"`
	GapsTruncated bool         `json:"gapsTruncated"`
}

// ConsumerStatus is one consumer's progress.
type ConsumerStatus struct {
	Consumer string `json:"consumer"`
	// State is "ok", "stale" (the newest heartbeat is older than
	// StaleAfter) or "none" (no heartbeat at all).
	State string `json:"state"`
	// LastHeartbeat is the newest heartbeat's time; HeartbeatAgeSeconds its
	// age on the view's clock (null without a heartbeat).
	LastHeartbeat       time.Time `json:"lastHeartbeat,omitzero"`
	HeartbeatAgeSeconds *float64  `json:"heartbeatAgeSeconds"`
	// LagSeconds is the largest lag of the current shards, as of their
	// heartbeats; RecordsPerSecond their summed recent throughput; Records
	// the records behind it.
	LagSeconds       float64 `json:"lagSeconds"`
	RecordsPerSecond float64 `json:"recordsPerSecond"`
	Records          int64   `json:"records"`
	// LastRecord is the newest record's approximate creation time.
	LastRecord    time.Time `json:"lastRecord,omitzero"`
	CurrentShards int       `json:"currentShards"`
	// Shards are the heartbeats of the last ShardHistory, newest first;
	// HiddenShards counts the older ones left out.
	Shards       []ShardStatus `json:"shards"`
	HiddenShards int           `json:"hiddenShards"`
}

// ShardStatus is one shard's heartbeat.
type ShardStatus struct {
	Shard            string    `json:"shard"`
	LastSeq          string    `json:"lastSeq,omitempty"`
	LastRecord       time.Time `json:"lastRecord,omitzero"`
	Updated          time.Time `json:"updated"`
	AgeSeconds       float64   `json:"ageSeconds"`
	LagSeconds       float64   `json:"lagSeconds"`
	RecordsPerSecond float64   `json:"recordsPerSecond"`
	Records          int64     `json:"records"`
	// Current: the heartbeat is within StaleAfter of the consumer's newest
	// (the shard counts in the consumer's figures); a shard that is not is
	// closed or idle.
	Current bool `json:"current"`
}

// Reconcile is a reconcile result with its totals.
type Reconcile struct {
	opsrec.Result
	// TotalGaps is the missing and conflicting events over all rows,
	// TotalHealed the ones fed through the consumers' paths.
	TotalGaps   int `json:"totalGaps"`
	TotalHealed int `json:"totalHealed"`
	// AgeSeconds is how long ago the run finished, on the view's clock.
	AgeSeconds float64 `json:"ageSeconds"`
}

// Overview reads the heartbeats, the last reconcile result and the recent
// gaps (three Queries of the checkpoints table, run concurrently).
func (v *View) Overview(ctx context.Context, now time.Time) (Overview, error) {
	now = now.UTC()
	out := Overview{Now: now, StaleAfterSeconds: v.cfg.StaleAfter.Seconds(), GapsSince: now.Add(-v.cfg.Window)}
	var (
		wg                        sync.WaitGroup
		progs                     []opsrec.Progress
		last                      opsrec.Result
		ran                       bool
		gaps                      []opsrec.Gap
		errProg, errLast, errGaps error
	)
	wg.Add(3)
	go func() { defer wg.Done(); progs, errProg = v.cfg.Records.Progresses(ctx) }()
	go func() { defer wg.Done(); last, ran, errLast = v.cfg.Records.LastResult(ctx) }()
	go func() { defer wg.Done(); gaps, errGaps = v.cfg.Records.Gaps(ctx, out.GapsSince) }()
	wg.Wait()
	if err := errors.Join(errProg, errLast, errGaps); err != nil {
		return Overview{}, fmt.Errorf("opsview: overview: %w", err)
	}
	out.Consumers = Consumers(progs, v.cfg.Consumers, now, v.cfg.StaleAfter, v.cfg.ShardHistory)
	if ran {
		out.LastReconcile = ReconcileOf(last, now)
	}
	out.Gaps, out.GapsTruncated = newestGaps(gaps, v.cfg.MaxGaps)
	return out, nil
}

// ReconcileOf adds a result's totals and age at now.
func ReconcileOf(r opsrec.Result, now time.Time) *Reconcile {
	if r.Rows == nil {
		r.Rows = []opsrec.DayGaps{}
	}
	rc := &Reconcile{Result: r, TotalGaps: r.Gaps(), AgeSeconds: now.Sub(r.Finished).Seconds()}
	for _, d := range r.Rows {
		rc.TotalHealed += d.Healed
	}
	return rc
}

// newestGaps returns gaps (oldest first, as opsrec.Store.Gaps returns them)
// newest first, at most max of them.
func newestGaps(gaps []opsrec.Gap, max int) ([]opsrec.Gap, bool) {
	out := slices.Clone(gaps)
	slices.Reverse(out)
	if out == nil {
		out = []opsrec.Gap{}
	}
	if max > 0 && len(out) > max {
		return out[:max], true
	}
	return out, false
}

// Consumers summarises heartbeats per consumer at now: one status for each
// of expected (in that order, even without a heartbeat), then one for each
// other consumer with heartbeats (by name). See the package documentation
// for current shards and staleness.
func Consumers(progs []opsrec.Progress, expected []string, now time.Time, staleAfter, history time.Duration) []ConsumerStatus {
	by := map[string][]opsrec.Progress{}
	for _, p := range progs {
		by[p.Consumer] = append(by[p.Consumer], p)
	}
	names := slices.Clone(expected)
	var others []string
	for c := range by {
		if !slices.Contains(expected, c) {
			others = append(others, c)
		}
	}
	slices.Sort(others)
	names = append(names, others...)
	out := make([]ConsumerStatus, 0, len(names))
	for _, c := range names {
		out = append(out, consumerStatus(c, by[c], now, staleAfter, history))
	}
	return out
}

func consumerStatus(consumer string, progs []opsrec.Progress, now time.Time, staleAfter, history time.Duration) ConsumerStatus {
	cs := ConsumerStatus{Consumer: consumer, State: "none", Shards: []ShardStatus{}}
	if len(progs) == 0 {
		return cs
	}
	slices.SortFunc(progs, func(a, b opsrec.Progress) int {
		return cmp.Or(b.Updated.Compare(a.Updated), cmp.Compare(a.Shard, b.Shard))
	})
	newest := progs[0].Updated
	cs.LastHeartbeat = newest.UTC()
	age := now.Sub(newest).Seconds()
	cs.HeartbeatAgeSeconds = &age
	cs.State = "ok"
	if now.Sub(newest) > staleAfter {
		cs.State = "stale"
	}
	for _, p := range progs {
		current := newest.Sub(p.Updated) <= staleAfter
		if current {
			cs.CurrentShards++
			cs.LagSeconds = max(cs.LagSeconds, p.Lag.Seconds())
			cs.RecordsPerSecond += p.Rate()
			cs.Records += p.Records
			if p.LastRecord.After(cs.LastRecord) {
				cs.LastRecord = p.LastRecord.UTC()
			}
		}
		if !current && now.Sub(p.Updated) > history {
			cs.HiddenShards++
			continue
		}
		cs.Shards = append(cs.Shards, ShardStatus{
			Shard: p.Shard, LastSeq: p.LastSeq, LastRecord: p.LastRecord.UTC(), Updated: p.Updated.UTC(),
			AgeSeconds: now.Sub(p.Updated).Seconds(), LagSeconds: p.Lag.Seconds(),
			RecordsPerSecond: p.Rate(), Records: p.Records, Current: current,
		})
	}
	return cs
}
