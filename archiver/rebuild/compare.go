package rebuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Problem says what kind of difference a Difference is.
type Problem string

// The problems Verify reports.
const (
	// MissingInProjection: the archive implies a row the live table lacks.
	MissingInProjection Problem = "missing-in-projection"
	// MissingInArchive: the live table holds a row no archived event explains.
	MissingInArchive Problem = "missing-in-archive"
	// Differs: both hold the row; one attribute differs.
	Differs Problem = "differs"
)

// Difference is one disagreement between the archive and the projection.
// For a missing row, Attribute is the kind's population counter and the
// present side's value of it is given.
type Difference struct {
	Kind      string            `json:"kind"`
	Table     string            `json:"table"`
	Key       map[string]string `json:"key"`
	Problem   Problem           `json:"problem"`
	Attribute string            `json:"attribute"`
	// Archive and Projection are the attribute's values (numbers and
	// strings as text, other types as JSON); nil when absent.
	Archive    *string `json:"archive"`
	Projection *string `json:"projection"`
}

// String renders the difference on one line for people.
func (d Difference) String() string {
	show := func(v *string) string {
		if v == nil {
			return "(absent)"
		}
		return *v
	}
	key := make([]string, 0, len(d.Key))
	for _, k := range slices.Sorted(maps.Keys(d.Key)) {
		key = append(key, k+"="+d.Key[k])
	}
	where := d.Table + " " + strings.Join(key, " ")
	switch d.Problem {
	case MissingInProjection:
		return fmt.Sprintf("%s: row missing from the projection (archive %s %s)", where, d.Attribute, show(d.Archive))
	case MissingInArchive:
		return fmt.Sprintf("%s: row not explained by the archive (projection %s %s)", where, d.Attribute, show(d.Projection))
	}
	return fmt.Sprintf("%s: %s: archive %s, projection %s", where, d.Attribute, show(d.Archive), show(d.Projection))
}

// keyNames returns the primary key attribute names of a logical table.
func keyNames(table string) []string {
	spec, ok := schema.TableSpec(table)
	if !ok {
		return nil
	}
	names := []string{spec.Hash.Name}
	if spec.Range != nil {
		names = append(names, spec.Range.Name)
	}
	return names
}

// rowKey renders a row's primary key as text, and as a map for reports.
func rowKey(table string, item map[string]types.AttributeValue) (string, map[string]string) {
	m := map[string]string{}
	var b strings.Builder
	for _, k := range keyNames(table) {
		v := render(item[k])
		s := ""
		if v != nil {
			s = *v
		}
		m[k] = s
		b.WriteString(k + "=" + s + "\x00")
	}
	return b.String(), m
}

// render shows an attribute value: numbers and strings as their text,
// anything else as canonical JSON; nil when absent.
func render(v types.AttributeValue) *string {
	var s string
	switch t := v.(type) {
	case nil:
		return nil
	case *types.AttributeValueMemberS:
		s = t.Value
	case *types.AttributeValueMemberN:
		s = t.Value
	default:
		b, err := json.Marshal(projector.CanonicalItem(map[string]types.AttributeValue{"v": v})["v"])
		if err != nil {
			s = fmt.Sprintf("%v", v)
		} else {
			s = string(b)
		}
	}
	return &s
}

func ratOf(v types.AttributeValue) (*big.Rat, bool) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(n.Value)
}

// empty reports whether a row has no contributing aggregate.
func (k RowKind) empty(row map[string]types.AttributeValue) bool {
	r, ok := ratOf(row[k.Population])
	return !ok || r.Sign() == 0
}

// sameValue compares one attribute of the two sides. Numbers compare as
// exact decimals; an absent number equals zero (counters are maintained
// with ADD, which treats a missing attribute as 0, and a counter that never
// moved is never written); tol > 0 allows that much absolute difference.
func sameValue(a, b types.AttributeValue, tol float64) bool {
	ra, aNum := ratOf(a)
	rb, bNum := ratOf(b)
	switch {
	case aNum && b == nil:
		return ra.Sign() == 0
	case bNum && a == nil:
		return rb.Sign() == 0
	case aNum && bNum:
		if tol <= 0 {
			return ra.Cmp(rb) == 0
		}
		d, _ := new(big.Rat).Sub(ra, rb).Float64()
		if d < 0 {
			d = -d
		}
		return d <= tol
	case a == nil || b == nil:
		return a == nil && b == nil
	}
	ja, errA := json.Marshal(projector.CanonicalItem(map[string]types.AttributeValue{"v": a}))
	jb, errB := json.Marshal(projector.CanonicalItem(map[string]types.AttributeValue{"v": b}))
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// Compare lists the differences between the rows of one kind recomputed
// from the archive and the live ones, sorted by key and attribute. tol
// overrides the kind's Derived tolerances by attribute name.
func Compare(kind RowKind, archive, live []map[string]types.AttributeValue, tol map[string]float64) []Difference {
	type pair struct {
		key        map[string]string
		arch, proj map[string]types.AttributeValue
	}
	rows := map[string]*pair{}
	add := func(items []map[string]types.AttributeValue, projection bool) {
		for _, it := range items {
			id, key := rowKey(kind.Table, it)
			p := rows[id]
			if p == nil {
				p = &pair{key: key}
				rows[id] = p
			}
			if projection {
				p.proj = it
			} else {
				p.arch = it
			}
		}
	}
	add(archive, false)
	add(live, true)
	var out []Difference
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		p := rows[id]
		d := Difference{Kind: kind.Name, Table: kind.Table, Key: p.key}
		switch {
		case p.proj == nil:
			if !kind.empty(p.arch) {
				d.Problem, d.Attribute, d.Archive = MissingInProjection, kind.Population, render(p.arch[kind.Population])
				out = append(out, d)
			}
			continue
		case p.arch == nil:
			if !kind.empty(p.proj) {
				d.Problem, d.Attribute, d.Projection = MissingInArchive, kind.Population, render(p.proj[kind.Population])
				out = append(out, d)
			}
			continue
		}
		names := map[string]bool{}
		// The projector's bookkeeping (row versions, attribute stamps) is
		// not part of a row: a rebuild writes it differently.
		for k := range p.arch {
			names[k] = !schema.IsInternalAttribute(k)
		}
		for k := range p.proj {
			names[k] = !schema.IsInternalAttribute(k)
		}
		for _, name := range slices.Sorted(maps.Keys(names)) {
			if !names[name] {
				continue
			}
			t := kind.Derived[name]
			if o, ok := tol[name]; ok {
				t = o
			}
			if sameValue(p.arch[name], p.proj[name], t) {
				continue
			}
			d.Problem, d.Attribute = Differs, name
			d.Archive, d.Projection = render(p.arch[name]), render(p.proj[name])
			out = append(out, d)
		}
	}
	return out
}
