// Package simulation provides the workload workflow of "streamfold
// simulate": generate a deterministic, realistic workload over the four
// domains (ingest/simulate) and either append it to the event table through
// the same appender as emit (Append) or write it as NDJSON that emit
// accepts (Write), and summarize what was generated, what its stream looked
// like (its shape) and, when appended, what the appends cost.
//
// The same Options give the same events. Append is safe to repeat: events
// already stored count as duplicates.
package simulation

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/emit"
)

// appendBatch is the events per append.
const appendBatch = 500

// Options are one simulation's settings.
type Options struct {
	// Config is the workload (seed, events, days, order, rate, GitHub
	// payloads); its zero fields take simulate's defaults, but a zero
	// Start is Days days before Now's day, so that projections' TTLs lie
	// in the future.
	Config simulate.Config
	// RateGiven says Config.Rate was chosen, not defaulted: an error with
	// the subject order, which has no rate.
	RateGiven bool
	// Now is the clock of the default Start; zero is time.Now.
	Now time.Time
	// ShapeWindow is the batch size, in records, of the summary's shape,
	// at least 1 (simulate.DefaultShapeWindow is typical).
	ShapeWindow int
	// Native makes Write send GitHub webhooks as native deliveries
	// {headers, body}.
	Native bool
	// SFNPayloads and MaxFutureSkew are the appender's, as in emit.Options.
	SFNPayloads   string
	MaxFutureSkew time.Duration
	// Progress, when set, gets a line at most once a second as Append goes.
	Progress io.Writer
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	_, err := o.config()
	return err
}

// config is the workload with its defaults, checked.
func (o *Options) config() (simulate.Config, error) {
	cfg := o.Config
	if cfg.Order == simulate.OrderSubject {
		if o.RateGiven {
			return cfg, toolkit.Invalid("simulate", "Config.Rate", nil, "applies to order time only")
		}
		cfg.Rate = 0
	} else if o.RateGiven && (cfg.Rate < 1 || cfg.Rate > simulate.MaxRate) {
		return cfg, toolkit.Invalid("simulate", "Config.Rate", nil, fmt.Sprintf("must be between 1 and %d", simulate.MaxRate))
	}
	if o.ShapeWindow < 1 {
		return cfg, toolkit.Invalid("simulate", "ShapeWindow", nil, "must be at least 1")
	}
	if _, err := ingest.ParsePayloadPolicy(o.SFNPayloads); err != nil {
		return cfg, toolkit.Invalid("simulate", "SFNPayloads", err, "")
	}
	if cfg.Start.IsZero() {
		now := o.Now
		if now.IsZero() {
			now = time.Now()
		}
		cfg.Start = now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -max(cfg.Days, 1))
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		field, problem, _ := strings.Cut(strings.TrimPrefix(err.Error(), "simulate: "), ": ")
		return cfg, &toolkit.OptionsError{Workflow: "simulate", Field: field, Problem: problem, Err: err}
	}
	return cfg, nil
}

// Counts is what the event table made of the generated events.
type Counts struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	Conflicts  int `json:"conflicts"`
}

// Summary is a simulation's JSON summary.
type Summary struct {
	Generated    int                   `json:"generated"`
	Redeliveries int                   `json:"redeliveries"`
	OutOfOrder   int                   `json:"outOfOrder"`
	PerDomain    map[schema.Domain]int `json:"perDomain"`
	// Order, Rate and GitHubPayloads are the workload's configuration and
	// Shape what it looked like to a consumer of its stream.
	Order          simulate.Order    `json:"order"`
	Rate           int               `json:"rate,omitempty"`
	GitHubPayloads simulate.Payloads `json:"githubPayloads"`
	Shape          simulate.Shape    `json:"shape"`
	Appended       *Counts           `json:"appended,omitempty"`
	// ConsumedCapacity is what the appends consumed, per accepted event.
	ConsumedCapacity *capacity.Snapshot `json:"consumedCapacity,omitempty"`
	Seconds          float64            `json:"seconds"`
	EventsPerSec     float64            `json:"eventsPerSecond"`
	Table            string             `json:"table,omitempty"`
	Out              string             `json:"out,omitempty"`
}

// run streams the workload to each and summarizes it.
func (o *Options) run(each func(schema.Event) error) (*Summary, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	shape := simulate.NewShapeMeter(o.ShapeWindow)
	st, err := simulate.Stream(cfg, func(e schema.Event) error {
		shape.Add(&e)
		return each(e)
	})
	if err != nil {
		return nil, err
	}
	s := &Summary{Generated: st.Events, Redeliveries: st.Redeliveries, OutOfOrder: st.OutOfOrder, PerDomain: st.PerDomain,
		Order: cfg.Order, Rate: cfg.Rate, GitHubPayloads: cfg.GitHubPayloads, Shape: shape.Shape(), Seconds: time.Since(began).Seconds()}
	if s.Seconds > 0 {
		s.EventsPerSec = float64(st.Events) / s.Seconds
	}
	return s, nil
}

// Write writes the workload to w as NDJSON that emit accepts.
func Write(ctx context.Context, w io.Writer, o Options) (*Summary, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	s, err := o.run(func(e schema.Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if o.Native && strings.HasPrefix(e.Type, schema.WorkflowJobTypePrefix) {
			d, err := ingest.ToGitHubDelivery(e)
			if err != nil {
				return err
			}
			return enc.Encode(d)
		}
		return enc.Encode(e)
	})
	if err != nil {
		return nil, err
	}
	return s, bw.Flush()
}

// WriteFile writes the workload to the file at path as Write does; the
// summary names the file.
func WriteFile(ctx context.Context, path string, o Options) (*Summary, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s, err := Write(ctx, f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	s.Out = path
	return s, nil
}

// Append appends the workload to n's event table through c.
func Append(ctx context.Context, c *awsclient.Clients, n schema.Naming, o Options) (*Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	payloads, _ := ingest.ParsePayloadPolicy(o.SFNPayloads)
	meter := capacity.NewMeter()
	app, err := ingest.NewAppender(c.MeteredDynamoDB(meter), ingest.AppenderConfig{Table: n.Table(schema.TableEvents), Payloads: payloads, MaxFutureSkew: o.MaxFutureSkew})
	if err != nil {
		return nil, toolkit.Invalid("simulate", "Appender", err, "")
	}
	counts := &Counts{}
	var batch []schema.Event
	began, last := time.Now(), time.Now()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := app.Append(ctx, batch)
		counts.Accepted += res.Count(ingest.Accepted)
		counts.Duplicates += res.Count(ingest.Duplicate)
		counts.Rejected += res.Count(ingest.Rejected)
		counts.Conflicts += res.Count(ingest.Conflict)
		batch = batch[:0]
		if o.Progress != nil && time.Since(last) >= time.Second {
			last = time.Now()
			done := counts.Accepted + counts.Duplicates + counts.Rejected
			fmt.Fprintf(o.Progress, "simulate: %d/%d events appended (%.0f/s)\n", done, o.Config.Events, float64(done)/time.Since(began).Seconds())
		}
		return err
	}
	s, err := o.run(func(e schema.Event) error {
		if batch = append(batch, e); len(batch) >= appendBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return nil, err
	}
	cc := emit.AppendCapacity(meter, counts.Accepted, n)
	s.Appended, s.ConsumedCapacity, s.Table = counts, &cc, n.Table(schema.TableEvents)
	return s, nil
}
