// Package opsrec keeps the operations records a person and reconcile read:
// the gaps the stream consumers noticed (records they may have missed) and
// the results of reconcile runs. Both live in the checkpoints table
// (schema.TableCheckpoints) under reserved consumer names, next to the
// local runner's per-shard checkpoints:
//
//	consumer "ops#gap"        shard_id "<noticed RFC 3339 nano>#<consumer>#<shard>"  one Gap
//	consumer "ops#reconcile"  shard_id "<finished RFC 3339 nano>"                    one Result
//	consumer "ops#progress"   shard_id "<consumer>#<shard>"                          the latest Progress (overwritten)
//
// The sort keys are fixed-width UTC times (Stamp), so a Query in key order
// is time order. Records carry a "ttl" attribute (RetentionDays after they
// were written) for a table with TTL on; the checkpoints table has none
// today, and the records are few (one per gap, one per reconcile run).
//
// A Store is safe for concurrent use. Every Put is idempotent for the same
// record (same key, same content).
package opsrec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
)

// Reserved consumer names of the records in the checkpoints table. No
// stream consumer may be named with the "ops#" prefix.
const (
	ConsumerGap       = "ops#gap"
	ConsumerReconcile = "ops#reconcile"
	ConsumerProgress  = "ops#progress"
	// RetentionDays is how long a record is kept where the table expires
	// items (its "ttl" attribute).
	RetentionDays = 90
)

// Gap kinds: how a consumer noticed it may have missed records.
const (
	// GapTrimmed: a shard's records were trimmed (older than the stream's
	// 24 hours) before the consumer read them (TrimmedDataAccessException,
	// or an iterator that starts after the checkpoint).
	GapTrimmed = "trimmed"
	// GapLatest: the consumer started at LATEST (no checkpoint, or a reset),
	// skipping what the shard held before.
	GapLatest = "latest"
	// GapDiscarded: records were given up after their maximum age or
	// retries and sent to an on-failure destination.
	GapDiscarded = "discarded"
	// GapOnFailure: records from an on-failure destination were seen (a
	// redrive), i.e. the stream consumer once gave them up.
	GapOnFailure = "onfailure"
	// GapSequenceJump: a batch's first record does not follow the last one
	// the consumer saw on the shard (records in between were never
	// delivered), or arrived after a long stall.
	GapSequenceJump = "seqjump"
)

// ErrInvalid reports a record that cannot be stored (a missing field).
var ErrInvalid = errors.New("opsrec: invalid record")

// Gap is what a consumer noticed: records of a shard that it may never
// have processed. From and To bound the records' approximate creation
// times (zero when unknown: reconcile then checks the whole window); the
// sequence numbers bound them on the shard when known.
type Gap struct {
	Consumer string    `json:"consumer"`
	Kind     string    `json:"kind"`
	Shard    string    `json:"shard,omitempty"`
	FirstSeq string    `json:"firstSeq,omitempty"`
	LastSeq  string    `json:"lastSeq,omitempty"`
	From     time.Time `json:"from,omitzero"`
	To       time.Time `json:"to,omitzero"`
	Records  int       `json:"records,omitempty"`
	Noticed  time.Time `json:"noticed"`
	Detail   string    `json:"detail,omitempty"`
}

// Validate reports a gap without a consumer, a kind or a time noticed.
func (g Gap) Validate() error {
	switch {
	case g.Consumer == "":
		return fmt.Errorf("%w: gap without consumer", ErrInvalid)
	case g.Kind == "":
		return fmt.Errorf("%w: gap of %s without kind", ErrInvalid, g.Consumer)
	case g.Noticed.IsZero():
		return fmt.Errorf("%w: gap of %s without the time noticed", ErrInvalid, g.Consumer)
	}
	return nil
}

// LogAttrs are the gap's log attributes after its consumer and shard
// (which a logger usually carries already): kind, the bounds known, the
// records and the detail.
func (g Gap) LogAttrs() []any {
	attrs := []any{"kind", g.Kind}
	if g.FirstSeq != "" {
		attrs = append(attrs, "first_seq", g.FirstSeq)
	}
	if g.LastSeq != "" {
		attrs = append(attrs, "last_seq", g.LastSeq)
	}
	if !g.From.IsZero() {
		attrs = append(attrs, "from", g.From.UTC().Format(time.RFC3339))
	}
	if !g.To.IsZero() {
		attrs = append(attrs, "to", g.To.UTC().Format(time.RFC3339))
	}
	if g.Records > 0 {
		attrs = append(attrs, "records", g.Records)
	}
	return append(attrs, "detail", g.Detail)
}

// DayGaps is one row of a reconcile result: what one domain lacked on one
// day (the events' event-time day, UTC), with up to a bounded number of
// event ids per kind (Result.IDsPerKind; the CLI's --json has all).
type DayGaps struct {
	Domain string `json:"domain"`
	Day    string `json:"day"`
	Events int    `json:"events"`
	// MissingProjection: events in the table whose fold into their
	// subject's stored state changes it (never applied).
	MissingProjection int `json:"missingProjection"`
	// MissingArchive: events in the table with no row in the archive.
	MissingArchive int `json:"missingArchive"`
	// Conflicts: events whose archived content differs from the table's.
	Conflicts int `json:"conflicts"`
	// DeadLettered: events the projector refuses by rule (future-dated,
	// poison), which are in the dead-letter table, not gaps.
	DeadLettered int `json:"deadLettered,omitempty"`
	// Late: events recorded after their aggregate expired (not projected
	// by rule, archived).
	Late int `json:"late,omitempty"`
	// ArchiveOnly (informational): archived events of the window that the
	// table no longer holds (expired after its 14 days).
	ArchiveOnly int `json:"archiveOnly,omitempty"`
	// Healed: gaps of this row fed through the consumers' paths (--heal).
	Healed int `json:"healed,omitempty"`
	// IDs are some of the event ids per kind ("projection", "archive",
	// "conflict"), at most Result.IDsPerKind each.
	IDs map[string][]string `json:"ids,omitempty"`
}

// Gaps reports whether the row holds a gap (missing or conflicting events).
func (d DayGaps) Gaps() int { return d.MissingProjection + d.MissingArchive + d.Conflicts }

// Result is one reconcile run.
type Result struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// From and To bound the window checked (events recorded in [From, To)).
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Events is how many events of the table were in the window.
	Events int  `json:"events"`
	Heal   bool `json:"heal"`
	// Rows are the domains and days with a gap, dead letters, late or
	// archive-only events (clean days are left out), sorted by domain, day.
	Rows []DayGaps `json:"rows"`
	// IDsPerKind is how many ids each row keeps per kind.
	IDsPerKind int `json:"idsPerKind"`
	// ReadUnits and WriteUnits are the DynamoDB capacity the run consumed;
	// S3Requests the archive requests it made.
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	S3Requests int64   `json:"s3Requests"`
	// Error is why the run failed, if it did (the rows are then partial).
	Error string `json:"error,omitempty"`
}

// Gaps is the number of missing and conflicting events over all rows.
func (r Result) Gaps() int {
	n := 0
	for _, d := range r.Rows {
		n += d.Gaps()
	}
	return n
}

// Validate reports a result without its times.
func (r Result) Validate() error {
	if r.Finished.IsZero() || r.From.IsZero() || r.To.IsZero() {
		return fmt.Errorf("%w: reconcile result without finished, from or to", ErrInvalid)
	}
	return nil
}

// API is the part of the DynamoDB client a Store uses; *dynamodb.Client
// satisfies it.
type API interface {
	ddbapi.PutItem
	ddbapi.Query
}

// Store reads and writes the records in the checkpoints table.
type Store struct {
	API API
	// Table is the checkpoints table's physical name
	// (naming.Table(schema.TableCheckpoints)).
	Table string
}

// Stamp renders t as a sort key: UTC, fixed width (nanoseconds always
// written), so that string order is time order.
func Stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// PutGap records a gap.
func (s Store) PutGap(ctx context.Context, g Gap) error {
	if err := g.Validate(); err != nil {
		return err
	}
	return s.put(ctx, ConsumerGap, Stamp(g.Noticed)+"#"+g.Consumer+"#"+g.Shard, g.Noticed, g)
}

// PutResult records a reconcile result.
func (s Store) PutResult(ctx context.Context, r Result) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return s.put(ctx, ConsumerReconcile, Stamp(r.Finished), r.Finished, r)
}

func (s Store) put(ctx context.Context, consumer, sk string, at time.Time, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("opsrec: encode %s record: %w", consumer, err)
	}
	item := map[string]types.AttributeValue{
		"consumer": &types.AttributeValueMemberS{Value: consumer},
		"shard_id": &types.AttributeValueMemberS{Value: sk},
		"record":   &types.AttributeValueMemberS{Value: string(body)},
		"ttl":      &types.AttributeValueMemberN{Value: fmt.Sprint(at.Add(RetentionDays * 24 * time.Hour).Unix())},
	}
	if _, err := s.API.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item}); err != nil {
		return fmt.Errorf("opsrec: put %s record %s: %w", consumer, sk, err)
	}
	return nil
}

// Gaps returns the gaps noticed at or after since, oldest first.
func (s Store) Gaps(ctx context.Context, since time.Time) ([]Gap, error) {
	return queryRecords[Gap](ctx, s, ConsumerGap, Stamp(since), true, 0)
}

// Results returns the latest reconcile results, newest first, at most
// limit (all when limit <= 0).
func (s Store) Results(ctx context.Context, limit int) ([]Result, error) {
	return queryRecords[Result](ctx, s, ConsumerReconcile, "", false, limit)
}

// LastResult returns the newest reconcile result; ok is false when
// reconcile never ran.
func (s Store) LastResult(ctx context.Context) (r Result, ok bool, err error) {
	rs, err := s.Results(ctx, 1)
	if err != nil || len(rs) == 0 {
		return Result{}, false, err
	}
	return rs[0], true, nil
}

// queryRecords is query decoding each record's JSON into a T.
func queryRecords[T any](ctx context.Context, s Store, consumer, from string, forward bool, limit int) ([]T, error) {
	var out []T
	err := s.query(ctx, consumer, from, forward, limit, func(b []byte) error {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// query reads the records of one reserved consumer in key order (forward)
// or reverse, from sort key from (inclusive; "" for all), calling fn with
// each record's JSON, stopping after limit records when limit > 0.
func (s Store) query(ctx context.Context, consumer, from string, forward bool, limit int, fn func([]byte) error) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String("#c = :c"),
		ExpressionAttributeNames:  map[string]string{"#c": "consumer"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":c": &types.AttributeValueMemberS{Value: consumer}},
		ScanIndexForward:          aws.Bool(forward),
	}
	if from != "" {
		in.KeyConditionExpression = aws.String("#c = :c AND #s >= :s")
		in.ExpressionAttributeNames["#s"] = "shard_id"
		in.ExpressionAttributeValues[":s"] = &types.AttributeValueMemberS{Value: from}
	}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	n := 0
	for {
		res, err := s.API.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("opsrec: query %s records: %w", consumer, err)
		}
		for _, item := range res.Items {
			v, ok := item["record"].(*types.AttributeValueMemberS)
			if !ok {
				continue
			}
			if err := fn([]byte(v.Value)); err != nil {
				sk, _ := item["shard_id"].(*types.AttributeValueMemberS)
				key := ""
				if sk != nil {
					key = sk.Value
				}
				return fmt.Errorf("opsrec: decode %s record %s: %w", consumer, key, err)
			}
			n++
			if limit > 0 && n >= limit {
				return nil
			}
		}
		if len(res.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// Progress is a consumer's heartbeat on one shard: how far it is and how
// fast it goes. Consumers write it at most once per interval per shard
// (one small put), so its cost does not grow with the events.
type Progress struct {
	Consumer string `json:"consumer"`
	Shard    string `json:"shard"`
	// LastSeq and LastRecord are the newest record handled: its sequence
	// number and approximate creation time (when it entered the stream).
	LastSeq    string    `json:"lastSeq,omitempty"`
	LastRecord time.Time `json:"lastRecord,omitzero"`
	// Updated is when this heartbeat was written; Lag is Updated minus
	// LastRecord (how far behind the stream the consumer was then).
	Updated time.Time     `json:"updated"`
	Lag     time.Duration `json:"lagNanos"`
	// Records is how many records were handled since Since (the previous
	// heartbeat, or the process start): Records / Updated-Since is the
	// recent throughput.
	Records int64     `json:"records"`
	Since   time.Time `json:"since,omitzero"`
}

// Validate reports a heartbeat without consumer, shard or time.
func (p Progress) Validate() error {
	if p.Consumer == "" || p.Shard == "" || p.Updated.IsZero() {
		return fmt.Errorf("%w: progress without consumer, shard or time", ErrInvalid)
	}
	return nil
}

// Rate is the recent throughput in records per second (0 when unknown).
func (p Progress) Rate() float64 {
	d := p.Updated.Sub(p.Since)
	if p.Since.IsZero() || d <= 0 {
		return 0
	}
	return float64(p.Records) / d.Seconds()
}

// PutProgress overwrites the consumer's heartbeat on the shard.
func (s Store) PutProgress(ctx context.Context, p Progress) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return s.put(ctx, ConsumerProgress, p.Consumer+"#"+p.Shard, p.Updated, p)
}

// Progresses returns every consumer's latest heartbeat per shard, by
// consumer and shard.
func (s Store) Progresses(ctx context.Context) ([]Progress, error) {
	return queryRecords[Progress](ctx, s, ConsumerProgress, "", true, 0)
}

// IsReserved reports whether a consumer name is one of this package's (a
// stream consumer must not use it).
func IsReserved(consumer string) bool { return strings.HasPrefix(consumer, "ops#") }
