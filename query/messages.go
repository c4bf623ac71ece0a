package query

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// MessageStatuses are seed 004's message statuses, in lifecycle order.
var MessageStatuses = schema.MessageStatuses()

// Message returns a message by id (seed 004 pattern 1: GetItem).
func (c *Client) Message(ctx context.Context, id string) (map[string]any, error) {
	if err := required("id", id); err != nil {
		return nil, err
	}
	return c.get(ctx, "message "+id, schema.TableMessages, map[string]types.AttributeValue{"message_id": avS(id)})
}

// MessageFilter selects messages: at least one of Stage, Status and Type,
// and an optional created_date range.
type MessageFilter struct {
	Stage, Status, Type string
	Created             TimeRange
}

// Messages lists messages newest first by created_date (seed 004 pattern 2).
// The index is chosen from the filter: status-created_date-index when Status
// is set, else message_type-created_date-index when Type is set, else
// stage-created_date-index; the other attributes given filter the results
// (FilterExpression), so such a page may hold fewer items than the limit.
func (c *Client) Messages(ctx context.Context, f MessageFilter, p PageRequest) (Page, error) {
	q, err := c.messages(f)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "messages", q, p)
}

func (c *Client) messages(f MessageFilter) (paged, error) {
	if f.Stage == "" && f.Status == "" && f.Type == "" {
		return paged{}, invalid("stage", "one of stage, status or type is required")
	}
	if f.Stage != "" {
		if err := oneOf("stage", f.Stage, schema.Stages...); err != nil {
			return paged{}, err
		}
	}
	if f.Status != "" {
		if err := oneOf("status", f.Status, MessageStatuses...); err != nil {
			return paged{}, err
		}
	}
	if err := required("type", f.Type); f.Type != "" && err != nil {
		return paged{}, err
	}
	if err := f.Created.validate(); err != nil {
		return paged{}, err
	}
	var index, attr, value string
	switch {
	case f.Status != "":
		index, attr, value = "status-created_date-index", "status", f.Status
	case f.Type != "":
		index, attr, value = "message_type-created_date-index", "message_type", f.Type
	default:
		index, attr, value = "stage-created_date-index", "stage", f.Stage
	}
	k := newCond().eq(attr, avS(value))
	f.Created.on(k, "created_date")
	var filter []string
	for _, kv := range [][2]string{{"stage", f.Stage}, {"message_type", f.Type}} {
		if kv[1] != "" && kv[0] != attr {
			filter = append(filter, k.eqPart(kv[0], avS(kv[1])))
		}
	}
	q := paged{
		fp:       fingerprint{"messages", append([]string{"stage=" + f.Stage, "status=" + f.Status, "type=" + f.Type}, f.Created.params()...)},
		phases:   []*dynamodb.QueryInput{c.queryInput(schema.TableMessages, c.indexFor(schema.TableMessages, index), k, filter, false)},
		keyAttrs: keyAttrs(schema.TableMessages, index),
	}
	c.shard(&q, schema.TableMessages, index)
	return q, nil
}

// StageStats are one stage's message counts over a window.
type StageStats struct {
	Stage string `json:"stage"`
	// Counts has every status, 0 included: messages created in the window
	// by their current status.
	Counts map[string]int64 `json:"counts"`
	Total  int64            `json:"total"`
	// SuccessRate is completed / (completed + failed), nil when neither.
	SuccessRate *float64 `json:"successRate"`
	// Daily are the projector's per-stage daily count rows (metrics table,
	// scope "messages/<stage>") of the UTC days the window touches, oldest
	// first; days without a row are left out.
	Daily []map[string]any `json:"daily"`
}

// MessageStats are message counts by status over a window, per stage.
type MessageStats struct {
	From   time.Time    `json:"from"`
	To     time.Time    `json:"to"`
	Stages []StageStats `json:"stages"`
}

// MaxStatsWindow bounds MessageStats' window.
const MaxStatsWindow = 31 * 24 * time.Hour

// MessageStats counts the messages created in [from, to] by status, for one
// stage or (stage "") each of dev, stage and prod (seed 004 pattern 4:
// "count by status ... last 24 hours"). Each stage is one Query on
// stage-created_date-index (stage = S AND created_date BETWEEN from AND to,
// projecting only status), every page of it, counted by status: each
// message is read once. The daily rows come from one BatchGetItem on the
// metrics table. Nothing is scanned.
func (c *Client) MessageStats(ctx context.Context, stage string, from, to time.Time) (MessageStats, error) {
	stages := schema.Stages
	if stage != "" {
		if err := oneOf("stage", stage, schema.Stages...); err != nil {
			return MessageStats{}, err
		}
		stages = []string{stage}
	}
	switch {
	case from.IsZero() || to.IsZero():
		return MessageStats{}, invalid("hours", "the window needs both ends")
	case !from.Before(to):
		return MessageStats{}, invalid("hours", "the window must end after it starts")
	case to.Sub(from) > MaxStatsWindow:
		return MessageStats{}, invalid("hours", "the window must be at most %d hours", int(MaxStatsWindow/time.Hour))
	}
	out := MessageStats{From: from.UTC(), To: to.UTC()}
	r := TimeRange{From: from, To: to}
	for _, st := range stages {
		s := StageStats{Stage: st, Counts: map[string]int64{}, Daily: []map[string]any{}}
		for _, status := range MessageStatuses {
			s.Counts[status] = 0
		}
		k := newCond().eq("stage", avS(st))
		r.on(k, "created_date")
		index, sharded := schema.IndexFor(schema.TableMessages, "stage-created_date-index", c.cfg.GSIShards)
		in := c.queryInput(schema.TableMessages, index, k, nil, true)
		in.ExpressionAttributeNames["#pst"] = "status"
		in.ProjectionExpression = aws.String("#pst")
		shards := 0
		if sharded {
			shards = c.cfg.GSIShards // every shard read and added up: the same reads
		}
		if err := c.eachShardPage(ctx, in, shards, func(items []map[string]types.AttributeValue) error {
			msgs, err := decodeItems[schema.MessageItem](items)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				if _, known := s.Counts[m.Status]; known {
					s.Counts[m.Status]++
					s.Total++
				}
			}
			return nil
		}); err != nil {
			return MessageStats{}, fmt.Errorf("query: message stats %s: %w", st, err)
		}
		if done := s.Counts["completed"] + s.Counts["failed"]; done > 0 {
			rate := float64(s.Counts["completed"]) / float64(done)
			s.SuccessRate = &rate
		}
		out.Stages = append(out.Stages, s)
	}
	if err := c.dailyMessageRows(ctx, &out); err != nil {
		return MessageStats{}, err
	}
	return out, nil
}

// eachPage runs a query over every page, handing each page's items to fn;
// it stops at fn's first error.
func (c *Client) eachPage(ctx context.Context, in *dynamodb.QueryInput, fn func([]map[string]types.AttributeValue) error) error {
	q := *in
	for {
		out, err := c.doQuery(ctx, &q)
		if err != nil {
			return err
		}
		if err := fn(out.Items); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		q.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// dailyMessageRows fills each stage's Daily with one BatchGetItem (plus
// retries of unprocessed keys).
func (c *Client) dailyMessageRows(ctx context.Context, ms *MessageStats) error {
	var days []string
	for d := ms.From.Truncate(24 * time.Hour); !d.After(ms.To); d = d.Add(24 * time.Hour) {
		days = append(days, d.Format("2006-01-02"))
	}
	table := c.naming.Table(schema.TableMetrics)
	var keys []map[string]types.AttributeValue
	for _, s := range ms.Stages {
		for _, d := range days {
			keys = append(keys, map[string]types.AttributeValue{"scope": avS(schema.MessageScope(s.Stage)), "date": avS(d)})
		}
	}
	rows := map[string]map[string]any{}
	for start := 0; start < len(keys); start += 100 {
		req := map[string]types.KeysAndAttributes{table: {Keys: keys[start:min(start+100, len(keys))]}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 10 {
				return fmt.Errorf("query: message stats: daily rows: keys still unprocessed after %d attempts", attempt)
			}
			out, err := c.doBatchGet(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return fmt.Errorf("query: message stats: daily rows: %w", err)
			}
			for _, it := range out.Responses[table] {
				row, err := decodeItem[schema.MessageMetricsItem](it)
				if err != nil {
					return fmt.Errorf("query: message stats: daily rows: %w", err)
				}
				rows[row.Scope+"|"+row.Date] = Plain(it)
			}
			req = out.UnprocessedKeys
			if len(req) > 0 {
				select { // back off before retrying throttled keys
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(attempt+1) * 25 * time.Millisecond):
				}
			}
		}
	}
	for i := range ms.Stages {
		for _, d := range days {
			if row, ok := rows[schema.MessageScope(ms.Stages[i].Stage)+"|"+d]; ok {
				ms.Stages[i].Daily = append(ms.Stages[i].Daily, row)
			}
		}
	}
	return nil
}
