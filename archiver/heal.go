package archiver

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/streamfold/streamfold/schema"
)

// HealSeq is the stream_sequence of a row Heal wrote: no stream record
// delivered it, and DynamoDB never gives a record sequence number 0, so
// healed rows are those with stream_sequence '0'. Their stream_event_id is
// HealEventIDPrefix and a hash of the event's subject and id.
const (
	HealSeq           = "0"
	HealEventIDPrefix = "heal-"
)

// HealStats says what Heal did.
type HealStats struct {
	Written         int // events Heal archived
	AlreadyArchived int // events the table's current snapshot held already: left alone
}

// Heal archives events that no stream consumer delivered: reconcile found
// them in the event table and not in the archive. Each event must be valid
// (schema.Validate; an invalid one makes Heal return an error wrapping
// ErrPoison before anything is written) and of a table's type. An event
// given twice is healed once.
//
// Heal is idempotent, and safe to run while the stream's batches,
// compactions and other heals are committed: per table, it reads which of
// the events the current snapshot holds already (their dates' files, the
// subject and event_id columns only; AlreadyArchived), writes the others as
// one file per date, named after the set of events it holds and the run
// (healKey: heal-<set>-<run>.parquet), and commits them in one snapshot
// only if no other commit came in between; otherwise it reads the new
// snapshot and decides again (and deletes the files it wrote and no longer
// commits: their names are its own). So a heal never archives an event
// that a heal or batch committed first, and a second heal of the same
// events writes nothing. Each table is committed on its own: an error may
// leave some tables healed and others not (and uncommitted files, orphans
// that Maintain deletes), and running the heal again finishes it.
//
// Healed rows have no stream position: stream_sequence is HealSeq and
// stream_event_id is HealEventIDPrefix and a hash of the event's subject
// and id. The one duplicate Heal cannot prevent is a stream record of the
// same event delivered after the heal (a consumer that was only late, a
// redrive from an on-failure destination): WriteBatch archives a batch
// without reading the table, so the event is then held twice, with the
// same content, until Compact keeps one row per (subject, event id). Heal
// only events older than the stream's retention (24 hours) and redrive
// the dead letters first; see the package doc, "Healing".
func (a *Archive) Heal(ctx context.Context, evs []schema.Event) (HealStats, error) {
	var st HealStats
	byTable := map[string][]Record{}
	seen := map[string]bool{}
	for _, e := range evs {
		ev := e
		payload, err := schema.Validate(&ev)
		if err != nil {
			return st, fmt.Errorf("archiver: heal event %s/%s: %w: %w", e.Subject, e.ID, ErrPoison, err)
		}
		table, ok := TableFor(ev.Type)
		if !ok {
			return st, fmt.Errorf("%w: heal event %s/%s: type %q has no table", ErrUnknownTable, ev.Subject, ev.ID, ev.Type)
		}
		if err := checkTime("time", ev.Time); err != nil {
			return st, fmt.Errorf("archiver: heal event %s/%s: %w: %w", ev.Subject, ev.ID, ErrPoison, err)
		}
		k := eventKey(ev.Subject, ev.ID)
		if seen[k] {
			continue
		}
		seen[k] = true
		byTable[table] = append(byTable[table], healRecord(ev, payload))
	}
	tables := slices.Sorted(maps.Keys(byTable))
	stats := make([]HealStats, len(tables))
	err := forEach(ctx, len(tables), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		var err error
		stats[i], err = a.healTable(ctx, tables[i], byTable[tables[i]])
		return a.gone(tables[i], err)
	})
	for _, s := range stats {
		st.Written += s.Written
		st.AlreadyArchived += s.AlreadyArchived
	}
	return st, err
}

// runID is a random id of one run (of Heal).
func runID() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// healRecord is the record Heal archives for a validated event: the same
// for every heal of the event.
func healRecord(ev schema.Event, payload schema.Payload) Record {
	return Record{Event: ev, Seq: HealSeq, StreamEventID: HealEventIDPrefix + hash128(eventKey(ev.Subject, ev.ID)), payload: payload}
}

// healPlan is what one attempt of healTable commits: per date, the events
// the snapshot lacks and the file they go to. A pure value.
type healPlan struct {
	files           []healFile
	alreadyArchived int
}

type healFile struct {
	key  string
	recs []Record
}

// planHeal decides, from the events of one table by date and the keys
// (eventKey) of those the snapshot holds, which events to write to which
// file.
func planHeal(l layout, table, run string, byDate map[string][]Record, present map[string]bool) healPlan {
	var p healPlan
	for _, date := range slices.Sorted(maps.Keys(byDate)) {
		var recs []Record
		var keys []string
		for _, r := range byDate[date] {
			k := eventKey(r.Event.Subject, r.Event.ID)
			if present[k] {
				p.alreadyArchived++
				continue
			}
			recs = append(recs, r)
			keys = append(keys, k)
		}
		if len(recs) > 0 {
			slices.SortFunc(recs, func(a, b Record) int {
				return cmp.Or(a.Event.Time.Compare(b.Event.Time), strings.Compare(a.Event.Subject, b.Event.Subject), strings.Compare(a.Event.ID, b.Event.ID))
			})
			p.files = append(p.files, healFile{key: l.healKey(table, date, keys, run), recs: recs})
		}
	}
	return p
}

// healTable heals one table's events (see Heal).
func (a *Archive) healTable(ctx context.Context, table string, recs []Record) (HealStats, error) {
	var st HealStats
	if _, err := a.lake.ensureOnce(ctx, table); err != nil {
		return st, err
	}
	byDate := map[string][]Record{}
	want := map[string]bool{}
	for _, r := range recs {
		d := EventDate(r.Event.Time)
		byDate[d] = append(byDate[d], r)
		want[eventKey(r.Event.Subject, r.Event.ID)] = true
	}
	dates := slices.Sorted(maps.Keys(byDate))
	run, err := runID()
	if err != nil {
		return st, err
	}
	held := map[string][]string{}       // data file -> the wanted events it holds (files never change)
	written := map[string]writtenFile{} // heal file put by an earlier attempt
	var committed []string
	err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		files, err := a.lake.dataFiles(ctx, t, dates)
		if err != nil {
			return false, err
		}
		var unread []string
		for _, d := range dates {
			for _, k := range keysOn(files, d) {
				if _, ok := held[k]; !ok {
					unread = append(unread, k)
				}
			}
		}
		size := func(k string) int64 { return files[k].FileSizeBytes() }
		err = a.readFiles(ctx, unread, size, func(key string, body []byte) error {
			ids, err := readIDs(body, want)
			if err != nil {
				return fmt.Errorf("archiver: read %s: %w", key, err)
			}
			held[key] = ids
			return nil
		})
		if err != nil {
			return false, err
		}
		present := map[string]bool{}
		for _, d := range dates {
			for _, k := range keysOn(files, d) {
				for _, id := range held[k] {
					present[id] = true
				}
			}
		}
		plan := planHeal(a.l, table, run, byDate, present)
		st = HealStats{AlreadyArchived: plan.alreadyArchived}
		committed = nil
		if len(plan.files) == 0 {
			return true, nil
		}
		fresh := make([]*writtenFile, len(plan.files))
		err = forEach(ctx, len(plan.files), a.cfg.Concurrency, func(ctx context.Context, i int) error {
			f := plan.files[i]
			if _, ok := written[f.key]; ok {
				return nil
			}
			var buf bytes.Buffer
			if err := Encode(&buf, table, f.recs, a.cfg.encodeOptions()); err != nil {
				return err
			}
			wf, err := newWrittenFile(f.key, buf.Bytes())
			if err != nil {
				return err
			}
			if err := a.put(ctx, f.key, buf.Bytes(), "application/vnd.apache.parquet"); err != nil {
				return err
			}
			fresh[i] = &wf
			return nil
		})
		for _, wf := range fresh {
			if wf != nil {
				written[wf.key] = *wf
			}
		}
		if err != nil {
			return false, err
		}
		adding := make([]writtenFile, len(plan.files))
		for i, f := range plan.files {
			adding[i] = written[f.key]
			st.Written += len(f.recs)
			committed = append(committed, f.key)
		}
		add, err := dataFiles(a.l, t, adding)
		if err != nil {
			return false, err
		}
		tx := t.NewTransaction()
		props := iceberg.Properties{"streamfold.operation": "heal", "streamfold.records": strconv.Itoa(st.Written)}
		if err := tx.AddDataFiles(ctx, add, props, icetable.WithoutDuplicateCheck()); err != nil {
			return false, err
		}
		_, err = tx.Commit(ctx)
		return false, err
	}, table)
	if err != nil {
		return HealStats{}, err
	}
	// Files an attempt wrote that a later one did not commit (another
	// writer archived some of their events meanwhile) are orphans; their
	// names are this run's, so no one else committed them: remove them now
	// rather than leave them to Maintain. (After an error, nothing is
	// removed: a commit whose outcome is unknown may hold them.)
	var stale []string
	for k := range written {
		if !slices.Contains(committed, k) {
			stale = append(stale, k)
		}
	}
	_ = a.deleteAll(ctx, stale)
	return st, nil
}
