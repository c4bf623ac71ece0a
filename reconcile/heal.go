package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/batchget"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// heal feeds the gaps through the consumers' own idempotent paths and
// checks them again: the events missing from the projections through
// Projector.Project (a join: an event applied meanwhile changes nothing),
// those missing from the archive through Archive.Heal (which writes only
// what it does not hold). Conflicts are left alone: the archive holds
// other content under the id, which no heal may overwrite. Each gap found
// applied (archived) afterwards is marked Healed and leaves its row's
// count for the row's Healed.
func (r *run) heal(ctx context.Context) error {
	r.setPhase("heal")
	keys := map[string]bool{}
	var order []string
	for _, g := range r.ids {
		if g.Kind == KindConflict {
			continue
		}
		k := g.Subject + "\x00" + g.ID
		if !keys[k] {
			keys[k] = true
			order = append(order, k)
		}
	}
	evs, err := r.readEvents(ctx, order)
	if err != nil {
		return err
	}
	var inputs []projector.Input
	inputOf := map[string]int{} // key -> index in inputs
	var toArchive []schema.Event
	for _, g := range r.ids {
		d, ok := evs[g.Subject+"\x00"+g.ID]
		if !ok {
			continue // gone from the table since the scan (expired)
		}
		switch g.Kind {
		case KindProjection:
			if d.projected {
				inputOf[g.Subject+"\x00"+g.ID] = len(inputs)
				inputs = append(inputs, d.input)
			}
		case KindArchive:
			toArchive = append(toArchive, d.ev)
		}
	}
	for start := 0; start < len(inputs); start += r.opts.ChunkEvents {
		chunk := inputs[start:min(start+r.opts.ChunkEvents, len(inputs))]
		out := r.cfg.Projector.Project(ctx, chunk)
		for s, err := range out.Failed {
			r.cfg.Logger.WarnContext(ctx, "reconcile: heal: subject not projected this time (run heal again)", "subject", s, "err", err)
		}
		for s, err := range out.Poison {
			r.cfg.Logger.WarnContext(ctx, "reconcile: heal: subject can never be projected", "subject", s, "err", err)
		}
		r.cfg.Logger.InfoContext(ctx, "reconcile: heal: projected", "events", len(chunk), "changed", out.Changed, "unchanged", out.Unchanged)
	}
	if len(toArchive) > 0 && r.cfg.Archive != nil {
		// Archive.Heal reads the files of the days it heals: by day, in
		// large chunks, so that each day's files are read about once.
		slices.SortFunc(toArchive, func(a, b schema.Event) int {
			return strings.Compare(archiver.EventDate(a.Time), archiver.EventDate(b.Time))
		})
		step := 10 * r.opts.ChunkEvents
		for start := 0; start < len(toArchive); start += step {
			chunk := toArchive[start:min(start+step, len(toArchive))]
			st, err := r.cfg.Archive.Heal(ctx, chunk)
			if err != nil {
				return fmt.Errorf("reconcile: heal the archive: %w", err)
			}
			r.cfg.Logger.InfoContext(ctx, "reconcile: heal: archived", "events", len(chunk), "written", st.Written, "alreadyArchived", st.AlreadyArchived)
		}
	}
	return r.recheck(ctx, evs, inputs, inputOf)
}

// recheck marks the gaps now applied or archived as healed.
func (r *run) recheck(ctx context.Context, evs map[string]decoded, inputs []projector.Input, inputOf map[string]int) error {
	r.setPhase("recheck")
	applied := make([]bool, len(inputs))
	for start := 0; start < len(inputs); start += r.opts.ChunkEvents {
		chunk := inputs[start:min(start+r.opts.ChunkEvents, len(inputs))]
		res, err := r.cfg.Projector.Check(ctx, chunk)
		if err != nil {
			return fmt.Errorf("reconcile: check after heal: %w", err)
		}
		for i, v := range res.Verdicts {
			applied[start+i] = v == projector.Applied
		}
	}
	// The archive's references of the partitions with an archive gap.
	archived := map[string]bool{}
	parts := map[part]bool{}
	for _, g := range r.ids {
		if d, ok := evs[g.Subject+"\x00"+g.ID]; ok && g.Kind == KindArchive {
			if t, _ := tableOf(d.ev.Type); t != "" {
				parts[part{t, g.Day}] = true
			}
		}
	}
	if r.cfg.Archive != nil {
		for p := range parts {
			err := r.cfg.Archive.EventRefs(ctx, p.table, []string{p.date}, func(ref EventRef) error {
				k := ref.Subject + "\x00" + ref.ID
				if d, ok := evs[k]; ok && d.hash == ref.Hash {
					archived[k] = true
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("reconcile: read archive %s/%s after heal: %w", p.table, p.date, err)
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.ids {
		g := &r.ids[i]
		k := g.Subject + "\x00" + g.ID
		switch g.Kind {
		case KindProjection:
			if j, ok := inputOf[k]; ok && applied[j] {
				g.Healed = true
				d := r.row(g.Domain, g.Day)
				d.MissingProjection--
				d.Healed++
			}
		case KindArchive:
			if archived[k] {
				g.Healed = true
				d := r.row(g.Domain, g.Day)
				d.MissingArchive--
				d.Healed++
			}
		}
	}
	return nil
}

// readEvents reads events of the event table by key (subject NUL id),
// strongly consistent.
func (r *run) readEvents(ctx context.Context, keys []string) (map[string]decoded, error) {
	ks := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		subject, id := splitKey(k)
		ks[i] = map[string]types.AttributeValue{
			schema.AttrSubject: &types.AttributeValueMemberS{Value: subject},
			schema.AttrID:      &types.AttributeValueMemberS{Value: id},
		}
	}
	out := map[string]decoded{}
	err := batchget.Each(ctx, r.cfg.DynamoDB, r.cfg.Naming.Table(schema.TableEvents), ks, types.KeysAndAttributes{ConsistentRead: aws.Bool(true)},
		func(it map[string]types.AttributeValue) error {
			if d, err := decodeItem(it); err == nil && d.invalid == nil {
				out[d.ev.Subject+"\x00"+d.ev.ID] = d
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("reconcile: read events to heal: %w", err)
	}
	return out, nil
}
