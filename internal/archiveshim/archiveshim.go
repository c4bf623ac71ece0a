// Package archiveshim gives reconcile the two archive methods it needs
// (EventRefs, Heal) over the archiver's existing API, until
// archiver.Archive has its own (branch rc-arch). Delete it then: the
// callers pass the *archiver.Archive itself.
//
// EventRefs reads every data object of the partitions (PartitionObjects,
// Read); Heal writes the events a partition does not hold with WriteBatch,
// as one batch per call with synthetic stream positions, after reading
// the partition's references (so a second Heal writes nothing).
package archiveshim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

// Shim adapts an *archiver.Archive to reconcile.Archive.
type Shim struct{ A *archiver.Archive }

// EventRefs implements reconcile.Archive.
func (s Shim) EventRefs(ctx context.Context, table string, dates []string, fn func(reconcile.EventRef) error) error {
	objs, err := s.A.PartitionObjects(ctx, table)
	if err != nil {
		return err
	}
	for _, d := range dates {
		for _, key := range objs[d] {
			recs, err := s.A.Read(ctx, key)
			if err != nil {
				return err
			}
			for _, r := range recs {
				h, err := schema.ContentHash(r.Event)
				if err != nil {
					return err
				}
				ref := reconcile.EventRef{ID: r.Event.ID, Subject: r.Event.Subject, Type: r.Event.Type, Hash: h}
				if r.Event.RecordedAt != nil {
					ref.RecordedAt = *r.Event.RecordedAt
				}
				if err := fn(ref); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Heal implements reconcile.Archive.
func (s Shim) Heal(ctx context.Context, evs []schema.Event) (reconcile.HealStats, error) {
	var st reconcile.HealStats
	type part struct{ table, date string }
	byPart := map[part][]schema.Event{}
	for _, e := range evs {
		t, ok := archiver.TableFor(e.Type)
		if !ok {
			return st, fmt.Errorf("archiveshim: event %s/%s: no archive table for type %q", e.Subject, e.ID, e.Type)
		}
		p := part{t, e.Time.UTC().Format(time.DateOnly)}
		byPart[p] = append(byPart[p], e)
	}
	var recs []archiver.Record
	for p, list := range byPart {
		have := map[string]bool{}
		if err := s.EventRefs(ctx, p.table, []string{p.date}, func(r reconcile.EventRef) error {
			have[r.Subject+"\x00"+r.ID] = true
			return nil
		}); err != nil {
			return st, err
		}
		for _, e := range list {
			if have[e.Subject+"\x00"+e.ID] {
				st.AlreadyArchived++
				continue
			}
			have[e.Subject+"\x00"+e.ID] = true
			recs = append(recs, archiver.Record{Event: e})
		}
	}
	if len(recs) == 0 {
		return st, nil
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Event.ID < recs[j].Event.ID })
	// Synthetic positions, unique per heal call (its start time in ns).
	base := time.Now().UnixNano()
	for i := range recs {
		recs[i].Seq = fmt.Sprintf("9%030d", base+int64(i))
		recs[i].StreamEventID = fmt.Sprintf("heal-%d-%d", base, i)
	}
	if _, err := s.A.WriteBatch(ctx, recs); err != nil {
		return st, err
	}
	st.Written = len(recs)
	return st, nil
}
