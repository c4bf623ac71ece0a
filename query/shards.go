package query

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Write-sharded indexes (Config.GSIShards, docs/decisions.md "Write-sharded
// GSI partition keys"). A list pattern on a sharded index runs its N shard
// Queries (key condition plus gsiShard = s) in parallel and merges them by
// the index's range key in the query's direction, ties broken by the
// table's primary key in the same direction. Its cursor holds one resume
// key per shard: the key of the last item taken from that shard (not the
// shard Query's LastEvaluatedKey: items fetched but not returned are read
// again), {} for an exhausted shard, nothing for a shard not yet read.

// indexFor is the index the client reads for a seed index of table.
func (c *Client) indexFor(table, index string) string {
	name, _ := schema.IndexFor(table, index, c.cfg.GSIShards)
	return name
}

// shard makes q, built on indexFor(table, seedIndex), read that index's
// shards when the index is sharded: the fingerprint gains "shards=N" (so
// a cursor of another shard count is refused), the LastEvaluatedKey
// attributes are the sharded index's. An unsharded q is left as it is.
func (c *Client) shard(q *paged, table, seedIndex string) {
	name, sharded := schema.IndexFor(table, seedIndex, c.cfg.GSIShards)
	if !sharded {
		return
	}
	spec, _ := schema.TableSpecFor(table, c.cfg.GSIShards)
	q.shards = c.cfg.GSIShards
	q.fp.params = append(q.fp.params, "shards="+strconv.Itoa(c.cfg.GSIShards))
	q.keyAttrs = keyAttrs(table, name)
	q.order = nil
	for _, ix := range spec.Indexes {
		if ix.Name == name {
			for _, k := range ix.Range {
				q.order = append(q.order, k.Name)
			}
		}
	}
	q.order = append(q.order, spec.Hash.Name)
	if spec.Range != nil {
		q.order = append(q.order, spec.Range.Name)
	}
}

// shardInput is in restricted to one shard: gsiShard = s joins the key
// condition.
func shardInput(in *dynamodb.QueryInput, s int) *dynamodb.QueryInput {
	out := *in
	out.ExpressionAttributeNames = maps.Clone(in.ExpressionAttributeNames)
	out.ExpressionAttributeValues = maps.Clone(in.ExpressionAttributeValues)
	out.ExpressionAttributeNames["#gsh"] = schema.AttrGSIShard
	out.ExpressionAttributeValues[":gsh"] = &types.AttributeValueMemberN{Value: strconv.Itoa(s)}
	out.KeyConditionExpression = aws.String("#gsh = :gsh AND " + aws.ToString(in.KeyConditionExpression))
	return &out
}

// shardState is one shard's place in a sharded read.
type shardState struct {
	// start is where the next Query of the shard starts (nil: at the
	// beginning); done is set once the shard has nothing more.
	start map[string]types.AttributeValue
	done  bool
	// buf are items fetched and not yet taken, in the query's order.
	buf []map[string]types.AttributeValue
	// resume is what the cursor records: the key of the last item taken,
	// or start when nothing fetched remains.
	resume map[string]types.AttributeValue
}

// runSharded fetches one page of a sharded q (see run).
func (c *Client) runSharded(ctx context.Context, what string, q paged, limit int, cursor string) (Page, error) {
	phase, states := 0, make([]map[string]types.AttributeValue, q.shards)
	if cursor != "" {
		var err error
		if phase, states, err = c.cursor.decodeShards(cursor, q.fp, q.keyAttrs, len(q.phases), q.shards); err != nil {
			return Page{}, err
		}
	}
	page := Page{Items: []map[string]any{}}
	for rounds := 0; ; {
		sh := make([]*shardState, q.shards)
		for i, st := range states {
			sh[i] = &shardState{start: st, done: st != nil && len(st) == 0, resume: st}
		}
		forward := aws.ToBool(q.phases[phase].ScanIndexForward)
		for len(page.Items) < limit {
			// Fetch, in parallel, every shard whose buffer is empty and
			// that has more.
			var need []int
			for i, s := range sh {
				if len(s.buf) == 0 && !s.done {
					need = append(need, i)
				}
			}
			if len(need) > 0 {
				if rounds >= c.cfg.MaxRequestsPerPage {
					next, err := c.cursor.encodeShards(q.fp, phase, resumeKeys(sh))
					page.Next = next
					return page, err
				}
				rounds++
				if err := c.fetchShards(ctx, q.lane(phase), sh, need, int32(limit-len(page.Items))); err != nil {
					return Page{}, fmt.Errorf("query: %s: %w", what, err)
				}
				continue
			}
			best := -1
			for i, s := range sh {
				if len(s.buf) > 0 && (best < 0 || before(s.buf[0], sh[best].buf[0], q.order, forward)) {
					best = i
				}
			}
			if best < 0 {
				break // every shard of the phase is exhausted
			}
			s := sh[best]
			it := s.buf[0]
			s.buf = s.buf[1:]
			page.Items = append(page.Items, Plain(it))
			s.resume = keyOfItem(it, q.keyAttrs)
			if len(s.buf) == 0 {
				s.resume = s.start // the fetch's LastEvaluatedKey
				if s.done {
					s.resume = map[string]types.AttributeValue{}
				}
			}
		}
		exhausted := true
		for _, s := range sh {
			exhausted = exhausted && s.done && len(s.buf) == 0
		}
		if !exhausted {
			next, err := c.cursor.encodeShards(q.fp, phase, resumeKeys(sh))
			page.Next = next
			return page, err
		}
		phase++
		states = make([]map[string]types.AttributeValue, q.shards)
		if phase == len(q.phases) {
			return page, nil // the end
		}
		if len(page.Items) >= limit {
			next, err := c.cursor.encodeShards(q.fp, phase, states)
			page.Next = next
			return page, err
		}
	}
}

// lane returns the Query of shard (or lane) i of a phase of q: the
// phase's Query restricted to shard i, or q's lane i.
func (q paged) lane(phase int) func(i int) *dynamodb.QueryInput {
	if q.lanes != nil {
		return func(i int) *dynamodb.QueryInput { return q.lanes[i] }
	}
	in := q.phases[phase]
	return func(i int) *dynamodb.QueryInput { return shardInput(in, i) }
}

// fetchShards runs one Query per shard in need, in parallel, each asking
// for limit items from the shard's start; it fills the shards' buffers and
// starts (or marks them done).
func (c *Client) fetchShards(ctx context.Context, lane func(i int) *dynamodb.QueryInput, sh []*shardState, need []int, limit int32) error {
	errs := make([]error, len(need))
	var wg sync.WaitGroup
	for j, i := range need {
		wg.Add(1)
		go func() {
			defer wg.Done()
			qin := *lane(i)
			qin.Limit = aws.Int32(limit)
			qin.ExclusiveStartKey = sh[i].start
			out, err := c.doQuery(ctx, &qin)
			if err != nil {
				errs[j] = fmt.Errorf("shard %d: %w", i, err)
				return
			}
			s := sh[i]
			s.buf = out.Items
			s.start = out.LastEvaluatedKey
			s.done = len(out.LastEvaluatedKey) == 0
			if len(s.buf) == 0 {
				s.resume = s.start
				if s.done {
					s.resume = map[string]types.AttributeValue{}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// resumeKeys are the shards' resume keys for a cursor: the key of the last
// item taken (or the start of what is not yet fetched), {} when exhausted,
// nil when not yet read.
func resumeKeys(sh []*shardState) []map[string]types.AttributeValue {
	out := make([]map[string]types.AttributeValue, len(sh))
	for i, s := range sh {
		out[i] = s.resume
	}
	return out
}

// keyOfItem is the ExclusiveStartKey that resumes after item: its
// attributes named in attrs (table key and index key; every index projects
// ALL).
func keyOfItem(item map[string]types.AttributeValue, attrs []string) map[string]types.AttributeValue {
	key := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		if v, ok := item[a]; ok {
			key[a] = v
		}
	}
	return key
}

// before reports whether a comes before b in a sharded read: by the
// attributes of order (the index's range key, then the table's key),
// ascending when forward, else descending.
func before(a, b map[string]types.AttributeValue, order []string, forward bool) bool {
	for _, name := range order {
		if c := compareAV(a[name], b[name]); c != 0 {
			return (c < 0) == forward
		}
	}
	return false
}

// compareAV orders two key values as DynamoDB does: S by their UTF-8
// bytes, N numerically; an absent value first.
func compareAV(a, b types.AttributeValue) int {
	switch x := a.(type) {
	case *types.AttributeValueMemberS:
		if y, ok := b.(*types.AttributeValueMemberS); ok {
			return strings.Compare(x.Value, y.Value)
		}
	case *types.AttributeValueMemberN:
		if y, ok := b.(*types.AttributeValueMemberN); ok {
			rx, okx := new(big.Rat).SetString(x.Value)
			ry, oky := new(big.Rat).SetString(y.Value)
			if okx && oky {
				return rx.Cmp(ry)
			}
			return strings.Compare(x.Value, y.Value)
		}
	}
	return cmp.Compare(present(a), present(b))
}

func present(v types.AttributeValue) int {
	if v == nil {
		return 0
	}
	return 1
}

// eachShardPage is eachPage over every shard of a sharded index (in
// order, shard 0 first), or over in itself when shards is 0.
func (c *Client) eachShardPage(ctx context.Context, in *dynamodb.QueryInput, shards int, fn func([]map[string]types.AttributeValue) error) error {
	if shards == 0 {
		return c.eachPage(ctx, in, fn)
	}
	for s := 0; s < shards; s++ {
		if err := c.eachPage(ctx, shardInput(in, s), fn); err != nil {
			return err
		}
	}
	return nil
}
