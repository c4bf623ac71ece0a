package ingest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema"
)

// PutItemAPI is the one DynamoDB call the Appender makes; *dynamodb.Client satisfies it.
type PutItemAPI interface {
	ddbapi.PutItem
}

// AppenderConfig configures an Appender.
type AppenderConfig struct {
	// Table is the physical name of the event table. Required.
	Table string
	// Concurrency is how many conditional writes are in flight at once. Default 16.
	Concurrency int
	// Retention is how long an event stays in the event table (its TTL). Default 14 days.
	Retention time.Duration
	// MaxAttempts bounds the attempts per event on throttling and other
	// retryable errors. Default 8.
	MaxAttempts int
	// BaseBackoff and MaxBackoff bound the jittered exponential backoff between
	// attempts. Defaults 25ms and 2s.
	BaseBackoff, MaxBackoff time.Duration
	// Now is the clock that stamps recordedat. Default time.Now.
	Now func() time.Time
	// DataEncoding is how items store data (schema.ItemEncoded). Default
	// schema.DataCompressed: zstd with the current dictionary when the item
	// is above one write unit and compressing makes it smaller.
	// schema.DataPlain writes the format consumers older than compression
	// read; schema.DataCompressedKeepURLs the format of consumers older
	// than URL elision (docs/event-contract.md).
	DataEncoding schema.DataEncoding
	// Payloads is what becomes of the input, output and cause of an agent
	// execution's events (schema.TypeExecutionStatusChange) on every route
	// that appends through this Appender (PayloadPolicy; default
	// DefaultPayloadPolicy, hash). See ApplyPayloadPolicy.
	Payloads PayloadPolicy
	// MaxFutureSkew is how far an event's time may be ahead of its
	// recordedat (the Appender's clock when it writes the event); an event
	// further ahead is Rejected (ErrTimeAhead, field "time"). Default
	// DefaultMaxFutureSkew (24 h); at most MaxMaxFutureSkew.
	MaxFutureSkew time.Duration
	// DeadLetters, when set, keeps every conflict (ErrConflict) as a dead
	// letter of consumer DeadLetterConsumer, reason ReasonConflict, with
	// both versions (ConflictDeadLetter). nil: conflicts are only reported.
	DeadLetters DeadLetterPutter
}

// DefaultMaxFutureSkew is the default AppenderConfig.MaxFutureSkew.
const DefaultMaxFutureSkew = 24 * time.Hour

// MaxMaxFutureSkew is the largest AppenderConfig.MaxFutureSkew accepted.
const MaxMaxFutureSkew = 366 * 24 * time.Hour

// DeadLetterPutter is what the Appender needs of the dead-letters table
// (*deadletter.Table satisfies it).
type DeadLetterPutter interface {
	Put(ctx context.Context, d deadletter.Letter) error
}

// SetDefaults fills zero fields with their defaults.
func (c *AppenderConfig) SetDefaults() {
	c.Concurrency = cmp.Or(c.Concurrency, 16)
	c.Retention = cmp.Or(c.Retention, schema.EventRetentionDays*24*time.Hour)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, 8)
	c.BaseBackoff = cmp.Or(c.BaseBackoff, 25*time.Millisecond)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, 2*time.Second)
	c.MaxFutureSkew = cmp.Or(c.MaxFutureSkew, DefaultMaxFutureSkew)
	c.Payloads = c.Payloads.orDefault()
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate names the first bad field.
func (c AppenderConfig) Validate() error {
	switch {
	case c.Table == "":
		return errors.New("ingest: AppenderConfig.Table: is required")
	case c.Concurrency < 1 || c.Concurrency > 256:
		return fmt.Errorf("ingest: AppenderConfig.Concurrency: must be between 1 and 256, got %d", c.Concurrency)
	case c.Retention < 0:
		return errors.New("ingest: AppenderConfig.Retention: must not be negative")
	case c.MaxAttempts < 1:
		return fmt.Errorf("ingest: AppenderConfig.MaxAttempts: must be at least 1, got %d", c.MaxAttempts)
	case c.BaseBackoff <= 0 || c.MaxBackoff < c.BaseBackoff:
		return errors.New("ingest: AppenderConfig.BaseBackoff: must be positive and not above MaxBackoff")
	case c.DataEncoding != schema.DataCompressed && c.DataEncoding != schema.DataPlain && c.DataEncoding != schema.DataCompressedNoDictionary && c.DataEncoding != schema.DataCompressedKeepURLs:
		return fmt.Errorf("ingest: AppenderConfig.DataEncoding: unknown %s", c.DataEncoding)
	case c.MaxFutureSkew <= 0 || c.MaxFutureSkew > MaxMaxFutureSkew:
		return fmt.Errorf("ingest: AppenderConfig.MaxFutureSkew: must be positive and at most %s, got %s", MaxMaxFutureSkew, c.MaxFutureSkew)
	}
	if _, err := ParsePayloadPolicy(string(c.Payloads)); err != nil {
		return fmt.Errorf("ingest: AppenderConfig.Payloads: %w", err)
	}
	return nil
}

// Appender appends events to the event table. It is the one place every
// ingest route goes through, so its rules hold on every route: an agent
// execution's input, output and cause are treated as AppenderConfig.Payloads
// says (ApplyPayloadPolicy); each event is validated; an event dated more
// than AppenderConfig.MaxFutureSkew ahead of its recordedat is Rejected
// (ErrTimeAhead). Each event is written with its content hash
// (schema.AttrContentHash) and a condition that no item with its (subject,
// id) exists: an event already there with the same content hash is reported
// as Duplicate and never written twice; with a different one it is a
// Conflict (ErrConflict), kept in AppenderConfig.DeadLetters. The stored
// item comes back with the failed condition
// (ReturnValuesOnConditionCheckFailure ALL_OLD), so telling them apart
// costs no read; a stored item without a content hash (appended before
// hashes existed) has its hash computed from its attributes. An
// event whose item would exceed DynamoDB's 400 KB item limit, even with data
// compressed, is Rejected with a *TooLargeError (ErrTooLarge). Events
// of one subject are written in input order; different subjects are written
// concurrently. Throttling and other retryable errors are retried with
// jittered exponential backoff. An Appender is safe for concurrent use.
type Appender struct {
	client PutItemAPI
	cfg    AppenderConfig
}

// NewAppender returns an Appender writing through client.
func NewAppender(client PutItemAPI, cfg AppenderConfig) (*Appender, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Appender{client: client, cfg: cfg}, nil
}

// DeriveID returns the id the writer gives an event that has none: a hash of
// its source, type, subject, time and data, so that a producer retrying the
// same content is still deduplicated.
func DeriveID(e schema.Event) string {
	h := sha256.New()
	for _, part := range []string{e.Source, e.Type, e.Subject, e.Time.UTC().Format(time.RFC3339Nano), string(e.Data)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:40]
}

// Prepare validates and normalises an event as Append would, without writing.
func Prepare(e *schema.Event) error {
	if e.ID == "" {
		// Subject may be derived by Validate; derive the id from the
		// normalised event so that it is stable.
		probe := *e
		probe.ID = "pending"
		if _, err := schema.Validate(&probe); err != nil {
			return err
		}
		*e = probe
		e.ID = DeriveID(*e)
		return nil
	}
	_, err := schema.Validate(e)
	return err
}

// Append validates and writes events. It returns one outcome per event, in
// input order. The returned error is non-nil only when the context ended or
// some writes Failed; the Result still says which events were written.
func (a *Appender) Append(ctx context.Context, events []schema.Event) (Result, error) {
	res := Result{Outcomes: make([]Outcome, len(events)), Errors: make([]error, len(events))}
	type job struct {
		i int
		w write
	}
	jobs := make([]job, 0, len(events))
	now := a.cfg.Now().UTC()
	for i := range events {
		w, err := a.prepare(events[i], now)
		if err != nil {
			res.Outcomes[i], res.Errors[i] = Rejected, err
			continue
		}
		jobs = append(jobs, job{i: i, w: w})
	}
	// Events of one subject are written one after another, in input order,
	// so the stream shows them in that order; different subjects run in
	// parallel.
	var groups [][]job
	bySubject := map[string]int{}
	for _, j := range jobs {
		subj := j.w.event.Subject
		g, ok := bySubject[subj]
		if !ok {
			g = len(groups)
			bySubject[subj] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], j)
	}
	workers := min(a.cfg.Concurrency, len(groups))
	ch := make(chan []job)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range ch {
				for _, j := range g {
					res.Outcomes[j.i], res.Errors[j.i] = a.put(ctx, j.w)
				}
			}
		}()
	}
	for _, g := range groups {
		ch <- g
	}
	close(ch)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if n := res.Count(Failed); n > 0 {
		for i, o := range res.Outcomes {
			if o == Failed {
				return res, fmt.Errorf("ingest: %d of %d events not written, first: %w", n, len(events), res.Errors[i])
			}
		}
	}
	return res, nil
}

// write is one event ready to be written: the event as stored, its content
// hash and its item.
type write struct {
	event schema.Event
	hash  string
	item  map[string]types.AttributeValue
}

// prepare applies the payload policy, validates and normalises e (Prepare),
// stamps recordedat, checks the future skew and builds the item with its
// content hash. Its errors are the event's rejection.
func (a *Appender) prepare(e schema.Event, now time.Time) (write, error) {
	ApplyPayloadPolicy(&e, a.cfg.Payloads)
	if err := Prepare(&e); err != nil {
		return write{}, err
	}
	if e.Time.After(now.Add(a.cfg.MaxFutureSkew)) {
		return write{}, newTimeAheadError(e, now, a.cfg.MaxFutureSkew)
	}
	e.RecordedAt = &now
	hash, err := schema.ContentHash(e)
	if err != nil {
		return write{}, err
	}
	item, err := a.item(e, hash)
	if err != nil {
		return write{}, err
	}
	return write{event: e, hash: hash, item: item}, nil
}

// item builds an event's item, with its content hash, and checks that
// DynamoDB can store it.
func (a *Appender) item(e schema.Event, hash string) (map[string]types.AttributeValue, error) {
	item, err := schema.ItemEncoded(e, a.cfg.Retention, a.cfg.DataEncoding)
	if err != nil {
		return nil, err
	}
	item[schema.AttrContentHash] = &types.AttributeValueMemberS{Value: hash}
	if size := schema.ItemSize(item); size > schema.MaxItemBytes {
		_, compressed := item[schema.AttrDataEncoding]
		return nil, &TooLargeError{Subject: e.Subject, ID: e.ID, ItemBytes: size, DataBytes: len(e.Data), Compressed: compressed, Limit: schema.MaxItemBytes}
	}
	return item, nil
}

var condNew = aws.String("attribute_not_exists(#s)")
var condNames = map[string]string{"#s": schema.AttrSubject}

// putInput is the conditional write of an item: only if no item has its
// key, returning the stored item when there is one.
func putInput(table string, item map[string]types.AttributeValue) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName:                           aws.String(table),
		Item:                                item,
		ConditionExpression:                 condNew,
		ExpressionAttributeNames:            condNames,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

func (a *Appender) put(ctx context.Context, w write) (Outcome, error) {
	in := putInput(a.cfg.Table, w.item)
	var last error
	for attempt := 1; attempt <= a.cfg.MaxAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return Failed, &WriteError{Subject: w.event.Subject, ID: w.event.ID, Attempts: attempt - 1, Err: err}
		}
		_, err := a.client.PutItem(ctx, in)
		if err == nil {
			return Accepted, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return a.existing(ctx, w, ccf.Item)
		}
		if schema.IsRefusedByDynamoDB(err) {
			return Rejected, &RefusedError{Subject: w.event.Subject, ID: w.event.ID, Err: err}
		}
		last = err
		if !Retryable(err) {
			break
		}
		if attempt < a.cfg.MaxAttempts {
			_ = retry.Sleep(ctx, retry.Full(a.cfg.BaseBackoff, a.cfg.MaxBackoff, attempt))
		}
	}
	return Failed, &WriteError{Subject: w.event.Subject, ID: w.event.ID, Err: last}
}

// existing decides what an event whose key is taken is, from the stored
// item: Duplicate or Conflict (kept in the dead letters, when configured;
// a failed dead-letter write makes the event Failed, so that the producer
// retries and the conflict is kept then).
func (a *Appender) existing(ctx context.Context, w write, stored map[string]types.AttributeValue) (Outcome, error) {
	cerr := CompareStored(w.event, w.hash, stored)
	if cerr == nil {
		return Duplicate, nil
	}
	if a.cfg.DeadLetters != nil {
		letter, err := ConflictLetter(cerr, a.cfg.Now())
		if err == nil {
			err = a.cfg.DeadLetters.Put(ctx, letter)
		}
		if err != nil {
			return Failed, &WriteError{Subject: w.event.Subject, ID: w.event.ID, Err: fmt.Errorf("conflict not kept in the dead letters: %w", err)}
		}
	}
	return Conflict, cerr
}

// CompareStored decides whether e, whose content hash is hash, is the event
// stored as item (the item its conditional write found in the way): nil
// when the contents are the same (a duplicate), else the *ConflictError.
// An item without schema.AttrContentHash (appended before content hashes
// existed) is hashed from its attributes (schema.EventFromItem); one that
// cannot even be read (or was not returned) conflicts with every event,
// with an empty Stored and StoredHash.
func CompareStored(e schema.Event, hash string, item map[string]types.AttributeValue) *ConflictError {
	stored, serr := schema.EventFromItem(item)
	storedHash, legacy := attrS(item, schema.AttrContentHash), false
	if storedHash == "" && serr == nil {
		legacy = true
		storedHash, _ = schema.ContentHash(stored)
	}
	if storedHash != "" && storedHash == hash {
		return nil
	}
	if serr != nil {
		stored = schema.Event{}
	}
	return &ConflictError{Subject: e.Subject, ID: e.ID, StoredHash: storedHash, NewHash: hash, Stored: stored, New: e, Legacy: legacy}
}

// retryableCodes are DynamoDB error codes worth another attempt.
var retryableCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"ServiceUnavailable":                     true,
	"TransactionConflictException":           true,
	"LimitExceededException":                 true,
}

// Retryable reports whether a DynamoDB error is transient: throttling, an
// internal error, or any error that says of itself that it is retryable.
func Retryable(err error) bool {
	var re interface{ RetryableError() bool }
	if errors.As(err, &re) {
		return re.RetryableError()
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		return retryableCodes[api.ErrorCode()]
	}
	var tmp interface{ Temporary() bool }
	if errors.As(err, &tmp) {
		return tmp.Temporary()
	}
	return false
}

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
