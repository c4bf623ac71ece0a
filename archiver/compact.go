package archiver

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Defaults of CompactOptions.
const (
	// DefaultCompactMinAge is the stream's retention: a batch can only be
	// retried (and rewrite its objects) while its records are in the
	// stream, so an object this old is never written again.
	DefaultCompactMinAge = 24 * time.Hour
	// DefaultLockTTL is how long a compaction lock holds.
	DefaultLockTTL = time.Hour
)

// ErrCompactionLocked: another compaction of the partition holds its lock.
var ErrCompactionLocked = errors.New("archiver: partition is being compacted")

// CompactOptions tunes one compaction. The zero value means the defaults.
type CompactOptions struct {
	// TargetObjectBytes: small objects are merged into outputs of up to
	// this many input bytes. Objects this large or larger are left alone.
	// Default Config.TargetObjectBytes.
	TargetObjectBytes int64
	// MinAge: only objects last modified at least MinAge ago are merged.
	// Zero means DefaultCompactMinAge (24h); a negative value takes every
	// object, which is safe only when no batch of the partition can still
	// be retried (tests, a stopped pipeline).
	MinAge time.Duration
	// Grace keeps replaced objects for this long after the manifest swap,
	// for readers that read the previous manifest; the first compaction of
	// the partition after that deletes them. Zero deletes them at once.
	Grace time.Duration
	// LockTTL is how long the partition's compaction lock holds before
	// another compaction may take it over (that of a crashed one).
	// Default DefaultLockTTL; one compaction must finish within it.
	LockTTL time.Duration
	// DryRun plans without changing anything.
	DryRun bool
}

// Validate names the first bad field.
func (o CompactOptions) Validate() error {
	switch {
	case o.TargetObjectBytes < 0:
		return fmt.Errorf("archiver: CompactOptions.TargetObjectBytes: must not be negative, got %d", o.TargetObjectBytes)
	case o.Grace < 0:
		return fmt.Errorf("archiver: CompactOptions.Grace: must not be negative, got %s", o.Grace)
	case o.LockTTL < 0:
		return fmt.Errorf("archiver: CompactOptions.LockTTL: must not be negative, got %s", o.LockTTL)
	}
	return nil
}

// CompactStats says what a compaction did.
type CompactStats struct {
	Table, Date   string
	ObjectsBefore int // objects the manifest listed before
	ObjectsAfter  int // and after
	Inputs        int // objects merged
	Outputs       int // objects written
	InputBytes    int64
	OutputBytes   int64
	Rows          int // rows written
	Duplicates    int // rows dropped: their (subject, event id) was in an earlier row
	Skipped       int // listed objects left alone (large enough, or too young)
	Deleted       int // replaced objects deleted (of this or an earlier run)
	Recovered     int // journals of earlier, interrupted runs finished
	Pending       int // journals kept for their grace period
}

// compactPlan is what one compaction will do; a pure value.
type compactPlan struct {
	ID      string
	Groups  [][]string // input keys, per output
	Outputs []string   // output keys
	Skipped int
	Bytes   int64 // input bytes
}

func (p compactPlan) inputs() []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, g...)
	}
	return out
}

// planCompaction decides which listed objects to merge into which outputs.
// Candidates are the objects smaller than target and older than minAge
// (minAge < 0: all), taken in key order; they are packed greedily into
// groups of at most target bytes, and groups of one object are dropped.
// The outputs are named after a hash of all inputs, so running the same plan
// twice writes the same keys.
func planCompaction(l layout, table, date string, keys []string, info map[string]listed, target int64, minAge time.Duration, now time.Time) (compactPlan, error) {
	var p compactPlan
	keys = slices.Sorted(slices.Values(keys))
	var cur []string
	var curBytes int64
	flush := func() {
		if len(cur) > 1 {
			p.Groups = append(p.Groups, cur)
		} else {
			p.Skipped += len(cur)
		}
		cur, curBytes = nil, 0
	}
	for _, k := range keys {
		o, ok := info[k]
		if !ok {
			return compactPlan{}, fmt.Errorf("%w: manifest %s lists %s, which does not exist", ErrCorruptObject, l.manifestKey(table, date), k)
		}
		if o.size >= target || (minAge >= 0 && now.Sub(o.modified) < minAge) {
			p.Skipped++
			continue
		}
		if len(cur) > 0 && curBytes+o.size > target {
			flush()
		}
		cur = append(cur, k)
		curBytes += o.size
	}
	flush()
	if len(p.Groups) == 0 {
		return p, nil
	}
	h := sha256.New()
	for _, g := range p.Groups {
		for _, k := range g {
			h.Write([]byte(k))
			h.Write([]byte{'\n'})
			p.Bytes += info[k].size
		}
		h.Write([]byte{'\n'})
	}
	p.ID = hex.EncodeToString(h.Sum(nil))[:16]
	for n := range p.Groups {
		p.Outputs = append(p.Outputs, l.compactKey(table, date, p.ID, n))
	}
	return p, nil
}

// journal records a compaction in flight, so that a later run can finish
// what a crashed one started.
type journal struct {
	ID        string     `json:"id"`
	Table     string     `json:"table"`
	Date      string     `json:"date"`
	Inputs    []string   `json:"inputs"`
	Outputs   []string   `json:"outputs"`
	CreatedAt time.Time  `json:"created_at"`
	SwappedAt *time.Time `json:"swapped_at,omitempty"`
}

type lockBody struct {
	Owner   string    `json:"owner"`
	Expires time.Time `json:"expires"`
}

// Compact merges the small objects of one partition into few large ones,
// without any reader ever seeing an event twice or missing one. In steps:
//
//  1. take the partition's lock (a conditional create; an expired lock is
//     taken over with If-Match);
//  2. finish the journals of earlier runs that were interrupted;
//  3. read the manifest and plan (see planCompaction);
//  4. write a journal naming the inputs and outputs;
//  5. write the outputs: the inputs' rows merged in (event time, sequence)
//     order, each (subject, event id) once;
//  6. swap the manifest with If-Match on the ETag read: the inputs' URIs
//     are replaced by the outputs', every other URI (such as one a batch
//     added meanwhile) is kept; on a conflict it re-reads and redoes this;
//  7. delete the inputs (at once, or after Grace by a later run), then the
//     journal, then release the lock.
//
// Before step 6 readers see the inputs only, after it the outputs only. A
// crash at any point leaves the manifest either before or after the swap;
// the next Compact of the partition finishes the journal (deletes the
// unlisted outputs of a run that did not swap, the replaced inputs of one
// that did). Compact is idempotent: with nothing to merge it changes
// nothing.
func (a *Archive) Compact(ctx context.Context, table, date string, opts CompactOptions) (CompactStats, error) {
	st := CompactStats{Table: table, Date: date}
	if _, ok := tableByName[table]; !ok {
		return st, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if err := checkDate(date); err != nil {
		return st, err
	}
	if err := opts.Validate(); err != nil {
		return st, err
	}
	if opts.TargetObjectBytes == 0 {
		opts.TargetObjectBytes = a.cfg.TargetObjectBytes
	}
	if opts.MinAge == 0 {
		opts.MinAge = DefaultCompactMinAge
	}
	if opts.LockTTL == 0 {
		opts.LockTTL = DefaultLockTTL
	}
	if !opts.DryRun {
		release, err := a.lock(ctx, table, date, opts.LockTTL)
		if err != nil {
			return st, err
		}
		defer release()
		if err := a.recoverJournals(ctx, table, date, opts, &st); err != nil {
			return st, err
		}
	}
	m, err := a.readManifest(ctx, table, date)
	if err != nil {
		return st, err
	}
	keys, err := a.keysOf(m.uris)
	if err != nil {
		return st, err
	}
	st.ObjectsBefore, st.ObjectsAfter = len(keys), len(keys)
	objs, err := a.list(ctx, a.l.dataDir(table, date))
	if err != nil {
		return st, err
	}
	info := make(map[string]listed, len(objs))
	for _, o := range objs {
		info[o.key] = o
	}
	plan, err := planCompaction(a.l, table, date, keys, info, opts.TargetObjectBytes, opts.MinAge, a.cfg.Now())
	if err != nil {
		return st, err
	}
	st.Skipped, st.InputBytes = plan.Skipped, plan.Bytes
	inputs := plan.inputs()
	st.Inputs = len(inputs)
	if len(plan.Groups) == 0 || opts.DryRun {
		st.Outputs = len(plan.Outputs)
		st.ObjectsAfter = len(keys) - len(inputs) + len(plan.Outputs)
		return st, nil
	}

	j := journal{ID: plan.ID, Table: table, Date: date, Inputs: inputs, Outputs: plan.Outputs, CreatedAt: a.cfg.Now().UTC()}
	if err := a.putJournal(ctx, j); err != nil {
		return st, err
	}

	seen := map[string]bool{}
	var written []string
	for n, g := range plan.Groups {
		rows, dups, size, err := a.mergeInto(ctx, table, g, plan.Outputs[n], seen)
		if err != nil {
			return st, err
		}
		st.Rows += rows
		st.Duplicates += dups
		if rows > 0 {
			st.OutputBytes += size
			written = append(written, plan.Outputs[n])
		}
	}
	st.Outputs = len(written)

	inURIs, outURIs := uris(a.l, inputs), uris(a.l, written)
	err = a.updateManifest(ctx, table, date, func(cur manifest) ([]string, bool, error) {
		if len(outURIs) > 0 && cur.has(outURIs[0]) && !cur.has(inURIs[0]) {
			return nil, false, nil // swapped already (a retry after a lost response)
		}
		next, missing := replaceURIs(cur.uris, inURIs, outURIs)
		if len(missing) > 0 {
			return nil, false, fmt.Errorf("%w: %s is no longer listed", ErrCompactionConflict, missing[0])
		}
		st.ObjectsAfter = len(next)
		return next, true, nil
	})
	if errors.Is(err, ErrCompactionConflict) {
		// Nothing of ours is listed: remove it all.
		if derr := a.deleteAll(ctx, written); derr != nil {
			return st, errors.Join(err, derr)
		}
		return st, errors.Join(err, a.delete(ctx, a.l.journalKey(table, date, j.ID)))
	}
	if err != nil {
		return st, err
	}

	if opts.Grace > 0 {
		now := a.cfg.Now().UTC()
		j.SwappedAt = &now
		st.Pending++
		return st, a.putJournal(ctx, j)
	}
	if err := a.deleteAll(ctx, inputs); err != nil {
		return st, err
	}
	st.Deleted += len(inputs)
	return st, a.delete(ctx, a.l.journalKey(table, date, j.ID))
}

func uris(l layout, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = l.uri(k)
	}
	return out
}

func (a *Archive) deleteAll(ctx context.Context, keys []string) error {
	return forEach(ctx, len(keys), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		return a.delete(ctx, keys[i])
	})
}

func (a *Archive) putJournal(ctx context.Context, j journal) error {
	body, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return wrapf(err, "encode journal %s", j.ID)
	}
	_, err = a.put(ctx, a.l.journalKey(j.Table, j.Date, j.ID), body, "application/json", putCond{})
	return err
}

// recoverJournals finishes the compactions of a partition that were
// interrupted. It runs under the partition's lock, so every journal it
// finds belongs to a run that is over. For each: every input or output
// that the manifest does not list is deleted (readers cannot see it), and
// then the journal. Inputs replaced less than Grace ago are kept, and so is
// their journal.
func (a *Archive) recoverJournals(ctx context.Context, table, date string, opts CompactOptions, st *CompactStats) error {
	objs, err := a.list(ctx, a.l.compactionDir(table, date))
	if err != nil {
		return err
	}
	for _, o := range objs {
		if !strings.HasSuffix(o.key, ".json") {
			continue // the lock
		}
		obj, err := a.get(ctx, o.key)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var j journal
		if err := json.Unmarshal(obj.body, &j); err != nil {
			return fmt.Errorf("%w: journal %s: %w", ErrCorruptObject, o.key, err)
		}
		m, err := a.readManifest(ctx, table, date)
		if err != nil {
			return err
		}
		unlistedIn, unlisted := a.unlisted(m, j.Inputs), a.unlisted(m, j.Outputs)
		if len(unlistedIn) > 0 && opts.Grace > 0 {
			now := a.cfg.Now().UTC()
			if j.SwappedAt == nil {
				j.SwappedAt = &now // swapped, but when is unknown: count from now
				if err := a.putJournal(ctx, j); err != nil {
					return err
				}
			}
			if now.Sub(*j.SwappedAt) < opts.Grace {
				st.Pending++
				continue
			}
		}
		if err := a.deleteAll(ctx, append(unlistedIn, unlisted...)); err != nil {
			return err
		}
		st.Deleted += len(unlistedIn)
		if err := a.delete(ctx, o.key); err != nil {
			return err
		}
		st.Recovered++
	}
	return nil
}

// unlisted returns the keys whose URIs m does not list.
func (a *Archive) unlisted(m manifest, keys []string) []string {
	var out []string
	for _, k := range keys {
		if !m.has(a.l.uri(k)) {
			out = append(out, k)
		}
	}
	return out
}

// lock takes the partition's compaction lock and returns its release.
func (a *Archive) lock(ctx context.Context, table, date string, ttl time.Duration) (func(), error) {
	key := a.l.lockKey(table, date)
	var id [8]byte
	_, _ = rand.Read(id[:])
	mine := lockBody{Owner: hex.EncodeToString(id[:]), Expires: a.cfg.Now().Add(ttl).UTC()}
	body, _ := json.Marshal(mine)
	_, err := a.put(ctx, key, body, "application/json", putCond{ifAbsent: true})
	if err != nil && isPreconditionFailed(err) {
		cur, gerr := a.get(ctx, key)
		switch {
		case errors.Is(gerr, ErrNotFound):
			_, err = a.put(ctx, key, body, "application/json", putCond{ifAbsent: true})
		case gerr != nil:
			return nil, gerr
		default:
			var held lockBody
			if json.Unmarshal(cur.body, &held) == nil && a.cfg.Now().Before(held.Expires) {
				return nil, fmt.Errorf("%w: %s/%s is locked by %s until %s", ErrCompactionLocked, table, date, held.Owner, held.Expires.Format(time.RFC3339))
			}
			_, err = a.put(ctx, key, body, "application/json", putCond{ifMatch: cur.etag})
		}
		if err != nil && isPreconditionFailed(err) {
			return nil, fmt.Errorf("%w: %s/%s: another compaction took the lock first", ErrCompactionLocked, table, date)
		}
	}
	if err != nil {
		return nil, err
	}
	return func() {
		// Release only our own lock (it may have expired and been taken).
		ctx := context.WithoutCancel(ctx)
		cur, err := a.get(ctx, key)
		if err != nil {
			return
		}
		var held lockBody
		if json.Unmarshal(cur.body, &held) == nil && held.Owner == mine.Owner {
			_ = a.delete(ctx, key)
		}
	}, nil
}

// mergeInto merges the records of the input objects into one output object
// in (event time, sequence) order, dropping any (subject, event id) in seen
// and adding the others to it. It returns the rows written, the duplicates
// dropped and the output size; with no rows it writes nothing.
func (a *Archive) mergeInto(ctx context.Context, table string, inputs []string, out string, seen map[string]bool) (rows, dups int, size int64, err error) {
	bodies := make([][]byte, len(inputs))
	err = forEach(ctx, len(inputs), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		obj, err := a.get(ctx, inputs[i])
		bodies[i] = obj.body
		return err
	})
	if err != nil {
		return 0, 0, 0, err
	}
	h := &mergeHeap{}
	for i, b := range bodies {
		d, err := newDecoder(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return 0, 0, 0, fmt.Errorf("archiver: compact %s: %w", inputs[i], err)
		}
		defer d.close()
		if err := h.pushNext(d); err != nil {
			return 0, 0, 0, fmt.Errorf("archiver: compact %s: %w", inputs[i], err)
		}
	}
	var buf bytes.Buffer
	opts := a.cfg.encodeOptions()
	opts.Compression = a.cfg.CompactCompression
	enc, err := newEncoder(&buf, table, opts)
	if err != nil {
		return 0, 0, 0, err
	}
	for h.Len() > 0 {
		it := heap.Pop(h).(mergeItem)
		id := it.rec.Event.Subject + "\x00" + it.rec.Event.ID
		if seen[id] {
			dups++
		} else {
			seen[id] = true
			if err := enc.write(&it.rec); err != nil {
				return 0, 0, 0, err
			}
			rows++
		}
		if err := h.pushNext(it.d); err != nil {
			return 0, 0, 0, err
		}
	}
	if err := enc.close(); err != nil {
		return 0, 0, 0, err
	}
	if rows == 0 {
		return 0, dups, 0, nil
	}
	if _, err := a.put(ctx, out, buf.Bytes(), "application/vnd.apache.parquet", putCond{}); err != nil {
		return 0, 0, 0, err
	}
	return rows, dups, int64(buf.Len()), nil
}

type mergeItem struct {
	rec Record
	d   *decoder
}

// mergeHeap yields the smallest head record of several sorted decoders.
type mergeHeap []mergeItem

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return compareRecords(&h[i].rec, &h[j].rec) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// pushNext pushes d's next record, if any.
func (h *mergeHeap) pushNext(d *decoder) error {
	rec, ok, err := d.next()
	if err != nil || !ok {
		return err
	}
	heap.Push(h, mergeItem{rec: rec, d: d})
	return nil
}
