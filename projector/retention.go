package projector

import (
	"maps"

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
	// shards, when more than 1, stamps AttrGSIShard (gsishard.go).
	shards int
}

func newRetention(c Config) retention {
	r := retention{days: c.RetentionDays, shards: c.GSIShards}
	if !c.ExpiredBefore.IsZero() {
		r.cutoff = c.ExpiredBefore.Unix()
	}
	return r
}

// expiry is the expiry of attrs (an item, or a contribution's row
// attributes, of table) under the retention: the table's days replaced by
// the retention's (a shift by whole days: the anchor is unchanged). has is
// false when attrs carry no ttl; born is true when it would be born expired.
func (r retention) expiry(table string, attrs map[string]types.AttributeValue) (ttl int64, has, born bool) {
	ttl, has = schema.TTLOf(attrs)
	if !has {
		return 0, false, false
	}
	if spec, ok := schema.TableSpec(table); ok && r.days > 0 && spec.TTLDays > 0 {
		ttl += int64(r.days-spec.TTLDays) * 86400
	}
	return ttl, true, r.cutoff > 0 && ttl <= r.cutoff
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
		ttl, has, born := r.expiry(it.Table, it.Item)
		switch {
		case born:
			expired++
			continue
		case has:
			it.Item = maps.Clone(it.Item)
			it.Item[schema.AttrTTL] = avN(ttl)
		}
		it.Item = gsiShardItem(it.Table, it.Item, r.shards)
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
		ttl, has, born := r.expiry(c.Table, c.Attrs)
		switch {
		case born:
			continue
		case has:
			c.Attrs = maps.Clone(c.Attrs)
			c.Stamps = maps.Clone(c.Stamps)
			if c.Stamps == nil {
				c.Stamps = map[string]Stamp{}
			}
			ttlAttr(c.Attrs, c.Stamps, ttl)
		}
		c = gsiShardRow(c, r.shards)
		out = append(out, c)
	}
	return out
}
