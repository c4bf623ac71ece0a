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

	"github.com/streamfold/streamfold/internal/retry"
	"github.com/streamfold/streamfold/schema"
)

// PutItemAPI is the one DynamoDB call the Appender makes; *dynamodb.Client satisfies it.
type PutItemAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
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
	// read.
	DataEncoding schema.DataEncoding
}

// SetDefaults fills zero fields with their defaults.
func (c *AppenderConfig) SetDefaults() {
	c.Concurrency = cmp.Or(c.Concurrency, 16)
	c.Retention = cmp.Or(c.Retention, schema.EventRetentionDays*24*time.Hour)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, 8)
	c.BaseBackoff = cmp.Or(c.BaseBackoff, 25*time.Millisecond)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, 2*time.Second)
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
	case c.DataEncoding != schema.DataCompressed && c.DataEncoding != schema.DataPlain && c.DataEncoding != schema.DataCompressedNoDictionary:
		return fmt.Errorf("ingest: AppenderConfig.DataEncoding: unknown %s", c.DataEncoding)
	}
	return nil
}

// Appender appends events to the event table. Each event is validated first
// and written with a condition that no item with its (subject, id) exists, so
// a repeated event is reported as Duplicate and never written twice. An
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
		i    int
		item map[string]types.AttributeValue
	}
	jobs := make([]job, 0, len(events))
	now := a.cfg.Now().UTC()
	for i := range events {
		e := events[i]
		if err := Prepare(&e); err != nil {
			res.Outcomes[i], res.Errors[i] = Rejected, err
			continue
		}
		e.RecordedAt = &now
		item, err := a.item(e)
		if err != nil {
			res.Outcomes[i], res.Errors[i] = Rejected, err
			continue
		}
		jobs = append(jobs, job{i: i, item: item})
	}
	// Events of one subject are written one after another, in input order,
	// so the stream shows them in that order; different subjects run in
	// parallel.
	var groups [][]job
	bySubject := map[string]int{}
	for _, j := range jobs {
		subj := attrS(j.item, schema.AttrSubject)
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
					res.Outcomes[j.i], res.Errors[j.i] = a.put(ctx, j.item)
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

// item builds an event's item and checks that DynamoDB can store it.
func (a *Appender) item(e schema.Event) (map[string]types.AttributeValue, error) {
	item, err := schema.ItemEncoded(e, a.cfg.Retention, a.cfg.DataEncoding)
	if err != nil {
		return nil, err
	}
	if size := schema.ItemSize(item); size > schema.MaxItemBytes {
		_, compressed := item[schema.AttrDataEncoding]
		return nil, &TooLargeError{Subject: e.Subject, ID: e.ID, ItemBytes: size, DataBytes: len(e.Data), Compressed: compressed, Limit: schema.MaxItemBytes}
	}
	return item, nil
}

var condNew = aws.String("attribute_not_exists(#s)")
var condNames = map[string]string{"#s": schema.AttrSubject}

func (a *Appender) put(ctx context.Context, item map[string]types.AttributeValue) (Outcome, error) {
	in := &dynamodb.PutItemInput{
		TableName:                aws.String(a.cfg.Table),
		Item:                     item,
		ConditionExpression:      condNew,
		ExpressionAttributeNames: condNames,
	}
	var last error
	for attempt := 1; attempt <= a.cfg.MaxAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return Failed, &WriteError{Subject: attrS(item, schema.AttrSubject), ID: attrS(item, schema.AttrID), Attempts: attempt - 1, Err: err}
		}
		_, err := a.client.PutItem(ctx, in)
		if err == nil {
			return Accepted, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return Duplicate, nil
		}
		if refused(err) {
			return Rejected, &RefusedError{Subject: attrS(item, schema.AttrSubject), ID: attrS(item, schema.AttrID), Err: err}
		}
		last = err
		if !Retryable(err) {
			break
		}
		if attempt < a.cfg.MaxAttempts {
			_ = retry.Sleep(ctx, retry.Full(a.cfg.BaseBackoff, a.cfg.MaxBackoff, attempt))
		}
	}
	return Failed, &WriteError{Subject: attrS(item, schema.AttrSubject), ID: attrS(item, schema.AttrID), Err: last}
}

// refused reports whether DynamoDB refused a write as invalid (error code
// ValidationException): the same write fails the same way on every
// attempt. schema.Validate refuses what breaks DynamoDB's limits before
// any write; this catches whatever it does not foresee.
func refused(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "ValidationException"
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
