package rebuild

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// VerifyOptions configures Verify.
type VerifyOptions struct {
	// Options configures the fold of the archive (into memory).
	Options
	// Tolerance overrides the absolute tolerance of attributes by name
	// (defaults: RowKind.Derived).
	Tolerance map[string]float64
	// Kinds restricts the comparison to these row kinds (Kind* names);
	// empty means every kind.
	Kinds []string
}

// Validate names the bad field (call SetDefaults first, as Verify does).
func (o VerifyOptions) Validate() error {
	if err := o.Options.Validate(); err != nil {
		return err
	}
	_, err := selectKinds(o.Kinds)
	return err
}

// RowCount says how many rows of one kind each side holds (empty rows
// included).
type RowCount struct {
	Kind       string `json:"kind"`
	Table      string `json:"table"`
	Archive    int    `json:"archive"`
	Projection int    `json:"projection"`
}

// Report is what Verify found. It marshals to JSON as is.
type Report struct {
	// Archive describes the fold of the archive.
	Archive Stats `json:"archive"`
	// Rows counts the rows compared, per kind.
	Rows []RowCount `json:"rows"`
	// Differences lists every difference, by kind, key and attribute;
	// empty (not null) when there is none.
	Differences []Difference `json:"differences"`
	// ExpiredLive counts live rows left out of the comparison because
	// their ttl has passed (DynamoDB deletes such items within days, and
	// the fold of the archive does not project them).
	ExpiredLive int `json:"expiredLive"`
}

// OK reports whether the projection agrees with the archive.
func (r Report) OK() bool { return len(r.Differences) == 0 }

// Verify recomputes the derived counter rows (RowKinds) from the archive by
// folding every event of src into a projector.MemStore, reads the live rows
// of the same kinds from live, and reports every difference (Compare).
//
// It reads the whole archive and holds the recomputed projections in
// memory. Live rows written by events the archive does not hold yet (the
// archiver's lag) show as differences: verify a quiet system, or one whose
// archiver has caught up.
//
// Rows with a TTL (run summaries) that has passed are no difference: the
// fold leaves out what would be born expired (projector.Config.ExpiredBefore,
// default now) and the live rows already expired are counted in
// Report.ExpiredLive and left out.
func Verify(ctx context.Context, src Source, live Live, opts VerifyOptions) (Report, error) {
	opts.SetDefaults()
	if err := opts.Validate(); err != nil {
		return Report{}, err
	}
	kinds, _ := selectKinds(opts.Kinds)
	if opts.Projector.ExpiredBefore.IsZero() {
		opts.Projector.ExpiredBefore = time.Now()
	}
	cutoff := opts.Projector.ExpiredBefore.Unix()
	mem := projector.NewMemStore()
	st, err := foldArchive(ctx, src, mem, opts.Options)
	rep := Report{Archive: st, Differences: []Difference{}}
	if err != nil {
		return rep, err
	}
	arch := StoreLive(mem)
	for _, k := range kinds {
		a, err := arch.Rows(ctx, k)
		if err != nil {
			return rep, err
		}
		a = rederive(k, a)
		l, err := live.Rows(ctx, k)
		if err != nil {
			return rep, err
		}
		var expired int
		l, expired = dropExpired(l, cutoff)
		rep.ExpiredLive += expired
		rep.Rows = append(rep.Rows, RowCount{Kind: k.Name, Table: k.Table, Archive: len(a), Projection: len(l)})
		rep.Differences = append(rep.Differences, Compare(k, a, l, opts.Tolerance)...)
	}
	return rep, nil
}

// dropExpired leaves out the rows whose ttl is at or before cutoff.
func dropExpired(rows []map[string]types.AttributeValue, cutoff int64) ([]map[string]types.AttributeValue, int) {
	out := rows[:0:0]
	for _, r := range rows {
		if ttl, ok := schema.TTLOf(r); ok && ttl <= cutoff {
			continue
		}
		out = append(out, r)
	}
	return out, len(rows) - len(out)
}

func selectKinds(names []string) ([]RowKind, error) {
	all := RowKinds()
	if len(names) == 0 {
		return all, nil
	}
	var out []RowKind
	for _, n := range names {
		found := false
		for _, k := range all {
			if k.Name == n {
				out, found = append(out, k), true
			}
		}
		if !found {
			return nil, fmt.Errorf("rebuild: VerifyOptions.Kinds: unknown row kind %q (want %s, %s or %s)", n, KindWorkflowMetrics, KindMessageCounts, KindRunSummaries)
		}
	}
	return out, nil
}

// rederive recomputes the derived attributes of the archive's rows from
// their final counters (projector.DeriveRow), dropping whatever an earlier
// derivation left: the archive side is then a pure function of the
// counters, whatever order the fold committed in (DeriveRow only sets
// attributes, so an attribute derived from intermediate counters, such as
// the conclusion of a run that once looked complete, would otherwise stay).
func rederive(kind RowKind, rows []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	if len(kind.Derived) == 0 {
		return rows
	}
	out := make([]map[string]types.AttributeValue, 0, len(rows))
	for _, r := range rows {
		cp := maps.Clone(r)
		for name := range kind.Derived {
			delete(cp, name)
		}
		projector.ApplyDerived(cp, projector.DeriveRow(kind.Table, cp))
		out = append(out, cp)
	}
	return out
}
