package query

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// Client answers the access patterns. It is safe for concurrent use.
type Client struct {
	api    DynamoAPI
	naming schema.Naming
	cfg    Config
	cursor cursorCodec
	stats  counters
}

// New returns a Client reading the tables of n through api.
func New(api DynamoAPI, n schema.Naming, cfg Config) (*Client, error) {
	if api == nil {
		return nil, errors.New("query: api is nil")
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key := append([]byte(nil), cfg.CursorKey...)
	cfg.CursorKey = key
	return &Client{api: api, naming: n, cfg: cfg, cursor: cursorCodec{key: key}}, nil
}

// MaxPageSize is the largest page a request may ask for.
func (c *Client) MaxPageSize() int { return c.cfg.MaxPageSize }

// Naming is the table naming the client reads.
func (c *Client) Naming() schema.Naming { return c.naming }

// Stats counts the DynamoDB requests a Client sent and the items they read,
// since it was created. Tests and benchmarks difference two snapshots.
type Stats struct {
	Requests     int64 `json:"requests"`
	GetItem      int64 `json:"getItem"`
	Query        int64 `json:"query"`
	BatchGetItem int64 `json:"batchGetItem"`
	// ItemsRead counts items DynamoDB evaluated (ScannedCount for queries,
	// items returned for gets).
	ItemsRead int64 `json:"itemsRead"`
}

type counters struct{ get, query, batch, items atomic.Int64 }

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	s := Stats{GetItem: c.stats.get.Load(), Query: c.stats.query.Load(), BatchGetItem: c.stats.batch.Load(), ItemsRead: c.stats.items.Load()}
	s.Requests = s.GetItem + s.Query + s.BatchGetItem
	return s
}

// Sub returns s - o, counter by counter.
func (s Stats) Sub(o Stats) Stats {
	return Stats{Requests: s.Requests - o.Requests, GetItem: s.GetItem - o.GetItem, Query: s.Query - o.Query,
		BatchGetItem: s.BatchGetItem - o.BatchGetItem, ItemsRead: s.ItemsRead - o.ItemsRead}
}

func (c *Client) doQuery(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	c.stats.query.Add(1)
	out, err := c.api.Query(ctx, in)
	if err == nil {
		c.stats.items.Add(int64(out.ScannedCount))
	}
	return out, err
}

func (c *Client) doGet(ctx context.Context, in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
	c.stats.get.Add(1)
	out, err := c.api.GetItem(ctx, in)
	if err == nil && out.Item != nil {
		c.stats.items.Add(1)
	}
	return out, err
}

func (c *Client) doBatchGet(ctx context.Context, in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemOutput, error) {
	c.stats.batch.Add(1)
	out, err := c.api.BatchGetItem(ctx, in)
	if err == nil {
		for _, items := range out.Responses {
			c.stats.items.Add(int64(len(items)))
		}
	}
	return out, err
}

// PageRequest asks for one page of a list pattern.
type PageRequest struct {
	// Limit is the page size: 0 means Config.DefaultPageSize; at most
	// Config.MaxPageSize.
	Limit int
	// Cursor is the Next of the previous page, "" for the first page.
	Cursor string
}

// Page is one page of a list pattern.
type Page struct {
	Items []map[string]any `json:"items"`
	// Next is the cursor of the following page, "" at the end.
	Next string `json:"next"`
}

func (c *Client) limit(n int) (int, error) {
	switch {
	case n == 0:
		return c.cfg.DefaultPageSize, nil
	case n < 0 || n > c.cfg.MaxPageSize:
		return 0, invalid("limit", "must be between 1 and %d", c.cfg.MaxPageSize)
	}
	return n, nil
}

// paged is a list pattern decided but not run: one Query per phase (the
// partitions it reads, in order), all on the same table or index.
type paged struct {
	fp       fingerprint
	phases   []*dynamodb.QueryInput
	keyAttrs []string // attribute names of a LastEvaluatedKey, sorted
	// shards, when positive, is the number of write shards of the index
	// every phase reads (shards.go), and order the attributes a merge of
	// the shards orders by: the index's range key, then the table's key.
	shards int
	order  []string
	// lanes, when set, are the Queries a single-phase read merges instead
	// of a sharded index's shards (shards is then len(lanes)): each reads
	// one partition, e.g. one status of StatusDateIndex (recent.go), and
	// is already restricted to its shard on a sharded index.
	lanes []*dynamodb.QueryInput
}

// run fetches one page of q.
func (c *Client) run(ctx context.Context, what string, q paged, req PageRequest) (Page, error) {
	limit, err := c.limit(req.Limit)
	if err != nil {
		return Page{}, err
	}
	if q.shards > 0 {
		return c.runSharded(ctx, what, q, limit, req.Cursor)
	}
	phase, start := 0, map[string]types.AttributeValue(nil)
	if req.Cursor != "" {
		if phase, start, err = c.cursor.decode(req.Cursor, q.fp, q.keyAttrs, len(q.phases)); err != nil {
			return Page{}, err
		}
	}
	page := Page{Items: []map[string]any{}}
	for requests := 0; ; {
		in := *q.phases[phase]
		in.Limit = aws.Int32(int32(limit - len(page.Items)))
		in.ExclusiveStartKey = start
		out, err := c.doQuery(ctx, &in)
		requests++
		if err != nil {
			return Page{}, fmt.Errorf("query: %s: %w", what, err)
		}
		page.Items = append(page.Items, plainItems(out.Items)...)
		start = out.LastEvaluatedKey
		if len(start) == 0 {
			phase++
			if phase == len(q.phases) {
				return page, nil // the end
			}
		}
		if len(page.Items) >= limit || requests >= c.cfg.MaxRequestsPerPage {
			page.Next, err = c.cursor.encode(q.fp, phase, start)
			return page, err
		}
	}
}

// all reads every item of one query (every page), at most max items; it
// reports whether it stopped at max.
func (c *Client) all(ctx context.Context, what string, in *dynamodb.QueryInput, max int) ([]map[string]types.AttributeValue, bool, error) {
	items, truncated, _, err := c.allCounted(ctx, what, in, max)
	return items, truncated, err
}

// allCounted is all that also says how many Query requests it sent (the
// client's counters are shared by concurrent callers).
func (c *Client) allCounted(ctx context.Context, what string, in *dynamodb.QueryInput, max int) (items []map[string]types.AttributeValue, truncated bool, requests int, err error) {
	q := *in
	for {
		out, err := c.doQuery(ctx, &q)
		requests++
		if err != nil {
			return nil, false, requests, fmt.Errorf("query: %s: %w", what, err)
		}
		items = append(items, out.Items...)
		if len(items) >= max {
			return items[:max], true, requests, nil
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, false, requests, nil
		}
		q.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// get reads one item by key as plain values; ErrNotFound when it does not
// exist.
func (c *Client) get(ctx context.Context, what, table string, key map[string]types.AttributeValue) (map[string]any, error) {
	item, err := c.getItem(ctx, what, table, key)
	if err != nil {
		return nil, err
	}
	return Plain(item), nil
}

// getItem reads one item by key; ErrNotFound when it does not exist.
func (c *Client) getItem(ctx context.Context, what, table string, key map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	out, err := c.doGet(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.naming.Table(table)), Key: key})
	if err != nil {
		return nil, fmt.Errorf("query: %s: %w", what, err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, what)
	}
	return out.Item, nil
}

// keyAttrs lists the attribute names of a LastEvaluatedKey of a query on a
// table (index "") or one of its indexes: the table's key plus the index's.
func keyAttrs(table, index string) []string {
	spec, ok := schema.TableSpec(table)
	if !ok {
		panic("query: unknown table " + table)
	}
	if index != "" && !hasIndex(spec, index) {
		spec, _ = schema.TableSpecFor(table, schema.MaxGSIShards) // a sharded variant
	}
	set := map[string]bool{spec.Hash.Name: true}
	if spec.Range != nil {
		set[spec.Range.Name] = true
	}
	if index != "" {
		found := false
		for _, ix := range spec.Indexes {
			if ix.Name != index {
				continue
			}
			found = true
			for _, k := range append(append([]schema.KeyAttr{}, ix.Hash...), ix.Range...) {
				set[k.Name] = true
			}
		}
		if !found {
			panic("query: unknown index " + table + "/" + index)
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func hasIndex(spec schema.Table, index string) bool {
	for _, ix := range spec.Indexes {
		if ix.Name == index {
			return true
		}
	}
	return false
}

// cond builds a key condition (or filter) expression with placeholder names
// and values: "#k0 = :v0 AND #k1 BETWEEN :v1 AND :v2".
type cond struct {
	parts  []string
	names  map[string]string
	values map[string]types.AttributeValue
}

func newCond() *cond {
	return &cond{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

func (b *cond) name(attr string) string {
	for k, v := range b.names {
		if v == attr {
			return k
		}
	}
	k := "#k" + strconv.Itoa(len(b.names))
	b.names[k] = attr
	return k
}

func (b *cond) value(av types.AttributeValue) string {
	k := ":v" + strconv.Itoa(len(b.values))
	b.values[k] = av
	return k
}

func (b *cond) eq(attr string, av types.AttributeValue) *cond {
	b.parts = append(b.parts, b.name(attr)+" = "+b.value(av))
	return b
}

func (b *cond) op(attr, op string, av types.AttributeValue) *cond {
	b.parts = append(b.parts, b.name(attr)+" "+op+" "+b.value(av))
	return b
}

func (b *cond) between(attr string, lo, hi types.AttributeValue) *cond {
	n := b.name(attr)
	b.parts = append(b.parts, n+" BETWEEN "+b.value(lo)+" AND "+b.value(hi))
	return b
}

// eqPart renders "name = value" with the condition's placeholders without
// adding it to the key condition (for a filter expression).
func (b *cond) eqPart(attr string, av types.AttributeValue) string {
	return b.name(attr) + " = " + b.value(av)
}

func (b *cond) beginsWith(attr string, av types.AttributeValue) *cond {
	b.parts = append(b.parts, "begins_with("+b.name(attr)+", "+b.value(av)+")")
	return b
}

func (b *cond) expr() string {
	s := ""
	for i, p := range b.parts {
		if i > 0 {
			s += " AND "
		}
		s += p
	}
	return s
}

// queryInput renders a key condition (and an optional filter sharing its
// placeholders) as a QueryInput.
func (c *Client) queryInput(table, index string, key *cond, filter []string, forward bool) *dynamodb.QueryInput {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(c.naming.Table(table)),
		KeyConditionExpression:    aws.String(key.expr()),
		ExpressionAttributeNames:  key.names,
		ExpressionAttributeValues: key.values,
		ScanIndexForward:          aws.Bool(forward),
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	if len(filter) > 0 {
		f := filter[0]
		for _, p := range filter[1:] {
			f += " AND " + p
		}
		in.FilterExpression = aws.String(f)
	}
	return in
}

func avS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func avN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
