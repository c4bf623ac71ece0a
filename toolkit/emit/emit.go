// Package emit provides the producer's workflow of "streamfold emit":
// append NDJSON lines (envelopes, GitHub deliveries, EventBridge events) to
// the event table, and say what each line became and what the appends cost.
//
// Run validates every line first; an invalid line is reported by number and
// the rest are still written. Appends are idempotent: a line whose subject
// and id are stored with the same content is a duplicate and is not written
// again; with other content it is a conflict, not written and kept with the
// stored version in the dead letters (consumer ingest). Run is safe to
// repeat; it is not safe for concurrent use of one Options value.
package emit

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// Options are one emit's settings.
type Options struct {
	// Input is the NDJSON to append.
	Input io.Reader
	// SFNTags is where Step Functions state machine tags come from: "aws"
	// (ListTagsForResource), a JSON file {"<stateMachineArn>":{..}}, or
	// "none"; empty is "aws", or "none" against a local DynamoDB.
	SFNTags string
	// SFNPayloads is what is kept of a Step Functions execution's input,
	// output and cause: "hash" (default), "drop" or "keep".
	SFNPayloads string
	// MaxFutureSkew rejects an event whose time is further ahead of its
	// append; zero is ingest.DefaultMaxFutureSkew.
	MaxFutureSkew time.Duration
	// BatchLines is the lines per append batch; zero is 500.
	BatchLines int
	// Progress, when set, is called as lines are read.
	Progress func(lines int, s *ingest.EmitSummary)
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	switch {
	case o.Input == nil:
		return toolkit.Invalid("emit", "Input", nil, "is nil")
	case o.BatchLines < 0:
		return toolkit.Invalid("emit", "BatchLines", nil, fmt.Sprintf("must not be negative, got %d", o.BatchLines))
	}
	return CheckAppendSettings("emit", o.SFNPayloads, o.MaxFutureSkew)
}

// CheckAppendSettings checks the settings of every workflow that appends
// events (emit, serve's ingest routes): the future skew (zero is
// ingest.DefaultMaxFutureSkew) and the Step Functions payload policy
// (empty is "hash"). Its errors name the options fields MaxFutureSkew and
// SFNPayloads of workflow.
func CheckAppendSettings(workflow, payloads string, maxFutureSkew time.Duration) error {
	if maxFutureSkew < 0 || maxFutureSkew > ingest.MaxMaxFutureSkew {
		return toolkit.Invalid(workflow, "MaxFutureSkew", nil, fmt.Sprintf("must be positive and at most %s, got %s", ingest.MaxMaxFutureSkew, maxFutureSkew))
	}
	if _, err := ingest.ParsePayloadPolicy(cmp.Or(payloads, "hash")); err != nil {
		return toolkit.Invalid(workflow, "SFNPayloads", err, "")
	}
	return nil
}

func (o *Options) payloads() string {
	if o.SFNPayloads == "" {
		return "hash"
	}
	return o.SFNPayloads
}

// Result is emit's JSON summary: ingest's, and what the appends cost.
type Result struct {
	*ingest.EmitSummary
	ConsumedCapacity *capacity.Snapshot `json:"consumedCapacity,omitempty"`
}

// Run appends o.Input to n's event table through c. The result is set
// whenever lines were read, also with an error (the appends that failed).
func Run(ctx context.Context, c *awsclient.Clients, n schema.Naming, local bool, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	payloads, _ := ingest.ParsePayloadPolicy(o.payloads())
	tags, err := TagSource(o.SFNTags, local, func() ingest.TagLister { return sfn.NewFromConfig(c.AWS) })
	if err != nil {
		return nil, toolkit.Invalid("emit", "SFNTags", err, "")
	}
	meter := capacity.NewMeter()
	metered := c.MeteredDynamoDB(meter) // conflicts' dead letters are counted with the appends
	app, err := ingest.NewAppender(metered, ingest.AppenderConfig{
		Table: n.Table(schema.TableEvents), Payloads: payloads, MaxFutureSkew: o.MaxFutureSkew,
		DeadLetters: deadletter.NewTable(metered, n.Table(schema.TableDeadLetters)),
	})
	if err != nil {
		return nil, toolkit.Invalid("emit", "Appender", err, "")
	}
	batch := o.BatchLines
	if batch == 0 {
		batch = 500
	}
	sum, err := ingest.Emit(ctx, o.Input, app, ingest.EmitConfig{BatchLines: batch, Tags: tags, StepFunctionsPayloads: payloads, Progress: o.Progress})
	if sum == nil {
		return nil, err
	}
	cc := AppendCapacity(meter, sum.Accepted, n)
	return &Result{EmitSummary: sum, ConsumedCapacity: &cc}, err
}

// AppendCapacity is what a meter of appends to n's event table recorded,
// per accepted event, keyed by logical table name.
func AppendCapacity(m *capacity.Meter, accepted int, n schema.Naming) capacity.Snapshot {
	return m.Snapshot().ForEvents(int64(accepted)).TrimTablePrefix(n.Table(""))
}

// TagSource builds the tag source a --sfn-tags value names: "none" (nil),
// "aws" (a cache over aws()) or a JSON file; empty is "aws", or "none"
// when local.
func TagSource(spec string, local bool, aws func() ingest.TagLister) (ingest.TagSource, error) {
	if spec == "" {
		spec = "aws"
		if local {
			spec = "none"
		}
	}
	switch spec {
	case "none":
		return nil, nil
	case "aws":
		return ingest.NewTagCache(aws(), ingest.DefaultTagTTL, time.Now), nil
	}
	st, err := ingest.LoadStaticTags(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: want {\"<stateMachineArn>\":{\"Type\":\"Agent\",...}}: %w", spec, err)
	}
	return st, nil
}
