package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/periodic"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Reconcile compares the event table's events recorded in the window with
// what the projector applied and what the archive holds, heals the gaps
// when opts.Heal, records the result (cfg.Ops) and returns it. An error
// means the run could not finish (a read failed): the report is then
// partial, and its Error says why.
func Reconcile(ctx context.Context, cfg Config, opts Options) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	if err := opts.Validate(); err != nil {
		return Report{}, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	started := cfg.Now().UTC()
	opts = opts.withDefaults(started)
	if !opts.To.After(opts.From) {
		return Report{}, fmt.Errorf("%w: the window [%s, %s) is empty (To defaults to now minus Settle)", ErrInvalid,
			opts.From.UTC().Format(time.RFC3339), opts.To.UTC().Format(time.RFC3339))
	}
	r := &run{cfg: cfg, opts: opts, rows: map[rowKey]*opsrec.DayGaps{}, domains: tableDomains(), began: time.Now()}
	r.phase.Store("scan")
	if cfg.Meter != nil {
		r.units0 = cfg.Meter.Snapshot().Units
	}
	if c, ok := cfg.Archive.(requestCounter); ok {
		r.requests0 = c.Requests()
	}
	stop := r.progressLoop()
	err := r.run(ctx)
	stop()
	rep := r.report(started, cfg.Now().UTC(), err)
	if cfg.Ops != nil {
		if perr := cfg.Ops.PutResult(ctx, rep.Result); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	return rep, err
}

type rowKey struct{ domain, day string }

// run is one Reconcile call's state.
type run struct {
	cfg     Config
	opts    Options
	domains map[string]string // archive table -> domain
	began   time.Time
	units0  capacity.Units
	// requests0 is the archive's S3 request count when the run began (an
	// Archive that counts its requests: *archiver.Archive).
	requests0 archiver.S3Requests

	mu   sync.Mutex
	rows map[rowKey]*opsrec.DayGaps
	ids  []GapID

	phase                                  atomic.Value
	scanned, events, checked, missP, missA atomic.Int64
	// maxBucket is the most entries the archive comparison held at once.
	maxBucket atomic.Int64
}

func (r *run) setPhase(p string) { r.phase.Store(p) }

func (r *run) noteBucket(n int) {
	for {
		cur := r.maxBucket.Load()
		if int64(n) <= cur || r.maxBucket.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

func (r *run) inWindow(t time.Time) bool {
	return !t.Before(r.opts.From) && t.Before(r.opts.To)
}

// row returns the row of domain and day; the caller holds mu.
func (r *run) row(domain, day string) *opsrec.DayGaps {
	k := rowKey{domain, day}
	d, ok := r.rows[k]
	if !ok {
		d = &opsrec.DayGaps{Domain: domain, Day: day}
		r.rows[k] = d
	}
	return d
}

// count adds to one counter of a row.
func (r *run) count(domain, day string, f func(*opsrec.DayGaps)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.row(domain, day))
}

func (r *run) archiveOnly(domain, day string) {
	r.count(domain, day, func(d *opsrec.DayGaps) { d.ArchiveOnly++ })
}

// gap records one gap.
func (r *run) gap(g GapID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, g)
	d := r.row(g.Domain, g.Day)
	switch g.Kind {
	case KindProjection:
		d.MissingProjection++
		r.missP.Add(1)
	case KindArchive:
		d.MissingArchive++
		r.missA.Add(1)
	case KindConflict:
		d.Conflicts++
	}
}

func (r *run) run(ctx context.Context) error {
	r.logNoticed(ctx)
	var sp *spill
	if r.cfg.Archive != nil {
		var err error
		if sp, err = newSpill(r.opts.TempDir); err != nil {
			return err
		}
		defer sp.remove()
	}
	if err := r.scan(ctx, sp); err != nil {
		return err
	}
	if sp != nil {
		parts, err := sp.finish()
		if err != nil {
			return err
		}
		if err := r.compareArchive(ctx, sp, parts); err != nil {
			return err
		}
	}
	if r.opts.Heal && len(r.ids) > 0 {
		return r.heal(ctx)
	}
	return nil
}

// logNoticed logs the gaps the consumers noticed since From: where to look
// first. The whole window is checked either way.
func (r *run) logNoticed(ctx context.Context) {
	if r.cfg.Ops == nil {
		return
	}
	gaps, err := r.cfg.Ops.Gaps(ctx, r.opts.From)
	if err != nil {
		r.cfg.Logger.WarnContext(ctx, "reconcile: could not read the gaps the consumers noticed; checking the whole window", "err", err)
		return
	}
	for _, g := range gaps {
		r.cfg.Logger.WarnContext(ctx, "reconcile: a consumer noticed a gap", "consumer", g.Consumer, "kind", g.Kind, "shard", g.Shard,
			"from", g.From, "to", g.To, "records", g.Records, "noticed", g.Noticed, "detail", g.Detail)
	}
}

// scan reads the window's events with parallel Scan segments; each
// segment judges its events against the projector's states in chunks and
// spills them per archive partition (sp nil: no archive comparison).
func (r *run) scan(ctx context.Context, sp *spill) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, r.opts.Segments)
	var wg sync.WaitGroup
	for seg := range r.opts.Segments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[seg] = r.scanSegment(ctx, seg, sp); errs[seg] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// scanInput is the Scan of one segment (pure): the whole items (the fold
// needs their data), eventually consistent, filtered to the window. The
// filter compares recordedat as text, which orders RFC 3339 times only to
// the second (".5Z" sorts before "Z"), so it asks for whole seconds around
// the window and the exact bound is applied to each item.
func scanInput(table string, seg, total int, from, to time.Time) *dynamodb.ScanInput {
	lo := from.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05")
	hi := to.UTC().Truncate(time.Second).Add(time.Second).Format("2006-01-02T15:04:05")
	return &dynamodb.ScanInput{
		TableName:                aws.String(table),
		Segment:                  aws.Int32(int32(seg)),
		TotalSegments:            aws.Int32(int32(total)),
		ConsistentRead:           aws.Bool(false),
		FilterExpression:         aws.String("#r >= :lo AND #r < :hi"),
		ExpressionAttributeNames: map[string]string{"#r": schema.AttrRecordedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
}

func (r *run) scanSegment(ctx context.Context, seg int, sp *spill) error {
	in := scanInput(r.cfg.Naming.Table(schema.TableEvents), seg, r.opts.Segments, r.opts.From, r.opts.To)
	var chunk []projector.Input
	for {
		out, err := r.cfg.DynamoDB.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("reconcile: scan %s segment %d: %w", aws.ToString(in.TableName), seg, err)
		}
		r.scanned.Add(int64(len(out.Items)))
		for _, item := range out.Items {
			in, ok, err := r.event(item, sp)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			chunk = append(chunk, in)
			if len(chunk) >= r.opts.ChunkEvents {
				if err := r.check(ctx, chunk); err != nil {
					return err
				}
				chunk = chunk[:0]
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if len(chunk) > 0 {
		return r.check(ctx, chunk)
	}
	return nil
}

// decoded is one event-table item decoded as the consumers decode its
// stream record (schema.EventFromItem, then projector.InputOf, which
// validates as streamimage.Event does).
type decoded struct {
	ev        schema.Event
	input     projector.Input
	projected bool // the projector folds it (agent events)
	invalid   error
	hash      string
}

// decodeItem decodes an event-table item; ok is false when it is not an
// event of the window (no recordedat, or outside).
func decodeItem(item map[string]types.AttributeValue) (decoded, error) {
	ev, err := schema.EventFromItem(item)
	if err != nil {
		return decoded{}, err
	}
	d := decoded{ev: ev}
	d.input, d.projected, d.invalid = projector.InputOf(ev, "")
	if h, ok := item[schema.AttrContentHash].(*types.AttributeValueMemberS); ok && h.Value != "" {
		d.hash = h.Value
	} else {
		d.hash, _ = schema.ContentHash(ev)
	}
	return d, nil
}

// event counts and spills one scanned item and returns its projector
// input when the projector folds it.
func (r *run) event(item map[string]types.AttributeValue, sp *spill) (projector.Input, bool, error) {
	d, err := decodeItem(item)
	if err != nil {
		// Neither consumer can decode it: both dead-letter it.
		r.events.Add(1)
		r.count("unknown", "", func(g *opsrec.DayGaps) { g.Events++; g.DeadLettered++ })
		return projector.Input{}, false, nil
	}
	if d.ev.RecordedAt == nil || !r.inWindow(*d.ev.RecordedAt) {
		return projector.Input{}, false, nil
	}
	r.events.Add(1)
	table, domain := tableOf(d.ev.Type)
	if domain == "" {
		domain = "unknown"
	}
	day := d.ev.Time.UTC().Format(time.DateOnly)
	r.count(domain, day, func(g *opsrec.DayGaps) {
		g.Events++
		if d.invalid != nil {
			g.DeadLettered++
		}
	})
	if d.invalid != nil {
		return projector.Input{}, false, nil
	}
	if sp != nil && table != "" {
		if err := sp.add(part{table, day}, entry{subject: d.ev.Subject, id: d.ev.ID, hash: d.hash}); err != nil {
			return projector.Input{}, false, err
		}
	}
	return d.input, d.projected, nil
}

// check judges a chunk of inputs and records the missing ones.
func (r *run) check(ctx context.Context, chunk []projector.Input) error {
	res, err := r.cfg.Projector.Check(ctx, chunk)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	for i, v := range res.Verdicts {
		e := chunk[i].Event
		_, domain := tableOf(e.Type)
		day := e.Time.UTC().Format(time.DateOnly)
		switch v {
		case projector.Missing:
			r.gap(GapID{Domain: domain, Day: day, Kind: KindProjection, ID: e.ID, Subject: e.Subject})
		case projector.Late:
			r.count(domain, day, func(g *opsrec.DayGaps) { g.Late++ })
		case projector.Quarantined, projector.Poison:
			r.count(domain, day, func(g *opsrec.DayGaps) { g.DeadLettered++ })
		}
	}
	r.checked.Add(int64(len(chunk)))
	return nil
}

// report renders the run's result: the rows that are not clean, sorted,
// each with at most IDsPerKind ids per kind, and every gap id.
func (r *run) report(started, finished time.Time, runErr error) Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	sort.Slice(r.ids, func(i, j int) bool {
		a, b := r.ids[i], r.ids[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.Day != b.Day {
			return a.Day < b.Day
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Subject != b.Subject {
			return a.Subject < b.Subject
		}
		return a.ID < b.ID
	})
	for _, g := range r.ids {
		d := r.row(g.Domain, g.Day)
		kind := g.Kind
		if g.Healed {
			kind = KindHealed
		}
		if len(d.IDs[kind]) >= r.opts.IDsPerKind {
			continue
		}
		if d.IDs == nil {
			d.IDs = map[string][]string{}
		}
		d.IDs[kind] = append(d.IDs[kind], g.ID)
	}
	rep := Report{IDs: append([]GapID{}, r.ids...)}
	rep.Started, rep.Finished = started, finished
	rep.From, rep.To = r.opts.From.UTC(), r.opts.To.UTC()
	rep.Events = int(r.events.Load())
	rep.Heal = r.opts.Heal
	rep.IDsPerKind = r.opts.IDsPerKind
	rep.Rows = []opsrec.DayGaps{}
	for _, d := range r.rows {
		if d.Gaps()+d.DeadLettered+d.Late+d.ArchiveOnly+d.Healed > 0 {
			rep.Rows = append(rep.Rows, *d)
		}
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		if rep.Rows[i].Domain != rep.Rows[j].Domain {
			return rep.Rows[i].Domain < rep.Rows[j].Domain
		}
		return rep.Rows[i].Day < rep.Rows[j].Day
	})
	if r.cfg.Meter != nil {
		u := r.cfg.Meter.Snapshot().Units
		rep.ReadUnits, rep.WriteUnits = u.Read-r.units0.Read, u.Write-r.units0.Write
	}
	if c, ok := r.cfg.Archive.(requestCounter); ok {
		rep.S3Requests = c.Requests().Sub(r.requests0).Total()
	}
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	return rep
}

// requestCounter is an Archive that counts its S3 requests.
type requestCounter interface{ Requests() archiver.S3Requests }

// progress is the run's progress now.
func (r *run) progress() Progress {
	el := time.Since(r.began)
	p := Progress{Phase: r.phase.Load().(string), Scanned: r.scanned.Load(), Events: r.events.Load(), Checked: r.checked.Load(),
		MissingProjection: r.missP.Load(), MissingArchive: r.missA.Load(), Elapsed: el}
	if s := el.Seconds(); s > 0 {
		p.EventsPerSecond = float64(p.Scanned) / s
	}
	return p
}

// progressLoop calls Options.Progress once a second until stop, which
// makes the last call.
func (r *run) progressLoop() (stop func()) {
	if r.opts.Progress == nil {
		return func() {}
	}
	stopTicks := periodic.Start(time.Second, func() { r.opts.Progress(r.progress()) })
	return func() {
		stopTicks()
		r.setPhase("done")
		r.opts.Progress(r.progress())
	}
}
