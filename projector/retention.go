package projector

import (
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Retention: a projection item of a table with a TTL (schema.Table.TTLDays)
// expires TTLDays after the latest recordedat of its aggregate's events,
// not after their event time: whatever streamfold appended stays visible
// for the retention period, however old the events say they are (a
// backfill, a late delivery, a replay). A counter row with a TTL (seed
// 003's run summaries) expires with the last of its contributors, rounded
// up to the next midnight UTC (rowTTL).
//
// Two settings change that, for rebuilds of old history
// (Config.RetentionDays, Config.ExpiredBefore); the stream projector uses
// neither.

// retention applies Config.RetentionDays and Config.ExpiredBefore to what
// an aggregate projects. The zero value changes nothing.
type retention struct {
	// days replaces the tables' TTLDays when positive.
	days int
	// cutoff, when positive, is the epoch second at or before which an
	// expiry means "born expired": such items and contributions to rows
	// with a TTL are left out.
	cutoff int64
}

func newRetention(c Config) retention {
	r := retention{days: c.RetentionDays}
	if !c.ExpiredBefore.IsZero() {
		r.cutoff = c.ExpiredBefore.Unix()
	}
	return r
}

// ttl returns v's expiry after the retention's days replace the table's
// default (ttl shifted by whole days: the anchor is unchanged).
func (r retention) ttl(table string, v types.AttributeValue) (int64, bool) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	ttl, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, false
	}
	if spec, ok := schema.TableSpec(table); ok && r.days > 0 && spec.TTLDays > 0 {
		ttl += int64(r.days-spec.TTLDays) * 86400
	}
	return ttl, true
}

// items applies the retention to an aggregate's items and returns the
// ones to project and how many were left out as born expired.
func (r retention) items(items []Item) ([]Item, int) {
	if r == (retention{}) {
		return items, 0
	}
	out := items[:0:0]
	expired := 0
	for _, it := range items {
		ttl, ok := r.ttl(it.Table, it.Item[schema.AttrTTL])
		if !ok {
			out = append(out, it)
			continue
		}
		if r.cutoff > 0 && ttl <= r.cutoff {
			expired++
			continue
		}
		it.Item = maps.Clone(it.Item)
		it.Item[schema.AttrTTL] = avN(ttl)
		out = append(out, it)
	}
	return out, expired
}

// contributions applies the retention to the ttl of contributions to rows
// with a TTL, leaving out those whose row would be born expired (so that a
// row counts exactly its contributors that are projected).
func (r retention) contributions(cs []Contribution) []Contribution {
	if r == (retention{}) {
		return cs
	}
	out := cs[:0:0]
	for _, c := range cs {
		ttl, ok := r.ttl(c.Table, c.Attrs[schema.AttrTTL])
		if !ok {
			out = append(out, c)
			continue
		}
		if r.cutoff > 0 && ttl <= r.cutoff {
			continue
		}
		c.Attrs = maps.Clone(c.Attrs)
		c.Stamps = maps.Clone(c.Stamps)
		if c.Stamps == nil {
			c.Stamps = map[string]Stamp{}
		}
		ttlAttr(c.Attrs, c.Stamps, ttl)
		out = append(out, c)
	}
	return out
}
