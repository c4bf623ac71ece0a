package projector

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// A counter row is written whole, by compare-and-set: the projector reads
// it, adds the batch's deltas exactly (decimal arithmetic), joins the static
// attributes by stamp, computes the derived attributes (DeriveRow) and puts
// the result conditioned on the row version it read. Counters, attributes
// and averages thus change in one write, in the same transaction as the
// states whose contributions moved them; there is no separate derive step
// that could fail after the commit.

// Row is a counter row as read: the item (nil when absent) and its version.
type Row struct {
	Table   string
	Key     map[string]types.AttributeValue
	Item    map[string]types.AttributeValue
	Version int64
}

// RowID identifies the row, as Contribution.RowID does.
func (r Row) RowID() string { return r.Table + "\x00" + keyString(r.Key) }

// RowRef names a counter row to read.
type RowRef struct {
	Table string
	Key   map[string]types.AttributeValue
}

// RowPut writes a counter row whole if its stored version is still
// Expected (0: the row must not exist yet). The store sets the row version
// to Expected+1.
type RowPut struct {
	Table    string
	Item     map[string]types.AttributeValue
	Expected int64
}

// encodeStamp renders a stamp for the row's stamp map.
func encodeStamp(s Stamp) string {
	return strconv.Itoa(s.Rank) + "|" + s.Time.UTC().Format(time.RFC3339Nano) + "|" + s.ID
}

func decodeStamp(v string) (Stamp, bool) {
	r, rest, ok := strings.Cut(v, "|")
	if !ok {
		return Stamp{}, false
	}
	ts, id, ok := strings.Cut(rest, "|")
	if !ok {
		return Stamp{}, false
	}
	rank, err1 := strconv.Atoi(r)
	t, err2 := time.Parse(time.RFC3339Nano, ts)
	if err1 != nil || err2 != nil {
		return Stamp{}, false
	}
	return Stamp{Rank: rank, Time: t.UTC(), ID: id}, true
}

// mergeRowDelta folds d into acc (deltas of one row): counters add (at
// the larger of their scales, see scale.go), and each attribute keeps the
// value with the greatest stamp.
func mergeRowDelta(acc *Contribution, d Contribution) error {
	if acc.Counters == nil {
		acc.Counters = map[string]int64{}
	}
	if acc.Scale == nil {
		acc.Scale = map[string]int{}
	}
	for _, k := range sortedKeys(d.Counters) {
		if err := addCounter(acc.Counters, acc.Scale, k, d.Counters[k], d.Scale[k]); err != nil {
			return fmt.Errorf("projector: %s row %s: %w", d.Table, keyString(d.Key), err)
		}
	}
	for k, v := range d.Attrs {
		s := d.Stamps[k]
		if _, have := acc.Attrs[k]; have && s.Compare(acc.Stamps[k]) < 0 {
			continue
		}
		if acc.Attrs == nil {
			acc.Attrs = map[string]types.AttributeValue{}
		}
		acc.Attrs[k] = v
		if !s.IsZero() {
			if acc.Stamps == nil {
				acc.Stamps = map[string]Stamp{}
			}
			acc.Stamps[k] = s
		}
	}
	return nil
}

// nextRow returns the row that cur (nil: absent) becomes with delta d:
// counters added exactly, attributes joined by stamp, derived attributes
// recomputed. Internal attributes other than the stamp map are dropped
// (the store sets the row version).
func nextRow(table string, cur map[string]types.AttributeValue, d Contribution) (map[string]types.AttributeValue, error) {
	row := make(map[string]types.AttributeValue, len(cur)+len(d.Counters)+len(d.Attrs)+2)
	for k, v := range cur {
		if k != schema.AttrRowVersion {
			row[k] = v
		}
	}
	for k, v := range d.Key {
		row[k] = v
	}
	for _, k := range sortedKeys(d.Counters) {
		v := d.Counters[k]
		if v == 0 {
			continue
		}
		sum := new(big.Rat)
		if c, ok := row[k]; ok {
			n, isN := c.(*types.AttributeValueMemberN)
			if !isN {
				return nil, fmt.Errorf("projector: %s row %s: counter %s is not a number", table, keyString(d.Key), k)
			}
			if _, ok := sum.SetString(n.Value); !ok {
				return nil, fmt.Errorf("projector: %s row %s: counter %s holds %q", table, keyString(d.Key), k, n.Value)
			}
		}
		add, _ := new(big.Rat).SetString(FormatScaled(v, d.Scale[k]))
		sum.Add(sum, add)
		row[k] = &types.AttributeValueMemberN{Value: NormalizeNumber(sum.FloatString(max(d.Scale[k], 12)))}
	}
	var stamps map[string]types.AttributeValue
	if m, ok := row[schema.AttrRowStamps].(*types.AttributeValueMemberM); ok {
		stamps = make(map[string]types.AttributeValue, len(m.Value))
		for k, v := range m.Value {
			stamps[k] = v
		}
	}
	for _, k := range sortedKeys(d.Attrs) {
		s := d.Stamps[k]
		if !s.IsZero() {
			if old, ok := stamps[k].(*types.AttributeValueMemberS); ok {
				if os, ok := decodeStamp(old.Value); ok && s.Compare(os) < 0 {
					continue
				}
			}
			if stamps == nil {
				stamps = map[string]types.AttributeValue{}
			}
			stamps[k] = avS(encodeStamp(s))
		}
		row[k] = d.Attrs[k]
	}
	if len(stamps) > 0 {
		row[schema.AttrRowStamps] = &types.AttributeValueMemberM{Value: stamps}
	}
	ApplyDerived(row, DeriveRow(table, row))
	return row, nil
}

// dropOversizeRows decides (pure) which plans of a chunk would take a
// counter row past MaxItemBytes, starting from rows (as read, or as the
// previous chunk wrote them): a run row gathers its attributes from many
// jobs, each job's own items fitting, and the join of their long names may
// not. Each such plan is poison (ErrTooLarge naming the row), never a
// conflict to retry: the row would be refused on every attempt. The plans
// are taken in chunk order, each row keeping the deltas that fit, so the
// plan whose delta makes a row too large is the one refused. It returns
// the plans to commit and, by subject, the ones refused.
func dropOversizeRows(part []plan, rows map[string]Row) ([]plan, map[string]error) {
	deltas := map[string][]Contribution{}
	for _, pl := range part {
		for _, d := range pl.deltas {
			deltas[d.RowID()] = append(deltas[d.RowID()], d)
		}
	}
	merge := func(ds []Contribution) Contribution {
		acc := Contribution{Table: ds[0].Table, Key: ds[0].Key}
		for _, d := range ds {
			mergeRowDelta(&acc, d)
		}
		return acc
	}
	var over []string
	for _, id := range sortedKeys(deltas) {
		// A row's one delta (the usual case) bounds the row without
		// merging: merged, it has the same key, counters and attributes
		// and at most its stamps, so its bound is no larger.
		ds := deltas[id]
		bound := ds[0]
		if len(ds) > 1 {
			bound = merge(ds)
		}
		if rowBound(rows[id], bound) > MaxItemBytes && rowTooLarge(rows[id], merge(ds)) != nil {
			over = append(over, id)
		}
	}
	if len(over) == 0 {
		return part, nil
	}
	bad := map[string]error{}
	for _, id := range over {
		var kept []Contribution
		for _, pl := range part {
			if bad[pl.subject] != nil {
				continue
			}
			for _, d := range pl.deltas {
				if d.RowID() != id {
					continue
				}
				acc := Contribution{Table: d.Table, Key: d.Key}
				for _, k := range kept {
					mergeRowDelta(&acc, k)
				}
				mergeRowDelta(&acc, d)
				if err := rowTooLarge(rows[id], acc); err != nil {
					bad[pl.subject] = fmt.Errorf("projector: %s: %w", pl.subject, err)
					continue
				}
				kept = append(kept, d)
			}
		}
	}
	keep := part[:0:0]
	for _, pl := range part {
		if bad[pl.subject] == nil {
			keep = append(keep, pl)
		}
	}
	return keep, bad
}

// rowTooLarge reports (ErrTooLarge) whether cur moved by d would be a row
// over MaxItemBytes as stored (its row version included).
func rowTooLarge(cur Row, d Contribution) error {
	item, err := nextRow(d.Table, cur.Item, d)
	if err != nil {
		return nil // not a size problem: buildTx reports it
	}
	_, err = rowItem(RowPut{Table: d.Table, Item: item, Expected: cur.Version})
	if errors.Is(err, ErrTooLarge) {
		return err
	}
	return nil
}

// rowBound is a cheap upper bound of the size of cur moved by d: the row
// read, its key and every attribute of d added whole (replacing one never grows it
// more), each counter and stamp at its longest, and room for the derived
// attributes and the row version. Only a row whose bound passes
// MaxItemBytes is computed exactly (rowTooLarge).
func rowBound(cur Row, d Contribution) int {
	n := ItemSize(cur.Item) + ItemSize(d.Key) + ItemSize(d.Attrs) + 512
	for k := range d.Counters {
		n += len(k) + 48
	}
	for k, st := range d.Stamps {
		n += len(k) + len(st.ID) + 64
	}
	return n
}
