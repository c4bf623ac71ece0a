package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/toolkit/simulation"
)

type simulateCmd struct {
	globals
	appendFlags
	Seed        int64  `default:"1" help:"Random seed; the same seed and flags give the same events."`
	Events      int    `default:"10000" help:"Number of events to produce, redeliveries included."`
	Start       string `placeholder:"YYYY-MM-DD" help:"First day (UTC); default: --days days before today, so that projections' TTLs lie in the future."`
	Days        int    `default:"1" help:"Number of days the workload spans."`
	Out         string `placeholder:"FILE" help:"Write NDJSON to this file (\"-\" = standard output) instead of appending."`
	Native      bool   `help:"With --out: write GitHub webhooks as native deliveries {headers, body}."`
	Order       string `default:"time" help:"\"time\": a steady stream at --rate, aggregates interleaved; \"subject\": the old thin order."`
	Rate        *int   `placeholder:"100" help:"With --order time: events per second of simulated time in each day's slice (default 100)."`
	Payloads    string `name:"github-payloads" default:"trimmed" help:"The workflow_job bodies: \"trimmed\" or \"full\" (GitHub's size, 7-11 KB)."`
	ShapeWindow int    `default:"100" help:"Batch size, in records, of the summary's shape."`
}

func (simulateCmd) Help() string { return longHelp("simulate") }

func (c *simulateCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	o := simulation.Options{Config: simulate.Config{Seed: c.Seed, Events: c.Events, Days: c.Days, Order: simulate.Order(c.Order),
		GitHubPayloads: simulate.Payloads(c.Payloads)}, RateGiven: c.Rate != nil, Now: env.clock(), ShapeWindow: c.ShapeWindow,
		Native: c.Native, SFNPayloads: c.SFNPayloads, MaxFutureSkew: c.MaxFutureSkew, Progress: env.progress(out)}
	if c.Rate != nil {
		o.Config.Rate = *c.Rate
	}
	var err error
	if c.Start != "" {
		if o.Config.Start, err = time.Parse("2006-01-02", c.Start); err != nil {
			return fail(exitUsage, "simulate: --start: want YYYY-MM-DD, got %q", c.Start)
		}
	}
	if err := o.Validate(); err != nil {
		return fail(exitUsage, "%w", err)
	}
	if c.Out != "" {
		return c.write(ctx, env, o)
	}
	n, err := c.naming()
	if err != nil {
		return fail(exitUsage, "simulate: %w", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "simulate: %w", err)
	}
	sum, err := simulation.Append(ctx, clients, n, o)
	if err != nil {
		return fail(exitUsageOr(err), "simulate: %w", err)
	}
	if err := env.render(out, sum, nil); err != nil {
		return err
	}
	printAppendCapacity(env.progress(out), "simulate", *sum.ConsumedCapacity)
	if sum.Appended.Rejected > 0 {
		return fail(exitFailed, "simulate: %d generated events were rejected (a generator bug)", sum.Appended.Rejected)
	}
	return nil
}

// write writes the events to --out; the summary follows unless they went
// to standard output.
func (c *simulateCmd) write(ctx context.Context, env *cliEnv, o simulation.Options) error {
	w := env.stdout
	if c.Out != "-" {
		f, err := os.Create(c.Out)
		if err != nil {
			return fail(exitUsage, "simulate: %w", err)
		}
		defer f.Close()
		w = f
	}
	sum, err := simulation.Write(ctx, w, o)
	if err != nil {
		return fail(exitRuntime, "simulate: %w", err)
	}
	if c.Out == "-" {
		return nil
	}
	sum.Out = c.Out
	return env.render(&output{}, sum, nil)
}

// printAppendCapacity prints what appending cost, for people.
func printAppendCapacity(w io.Writer, what string, s capacity.Snapshot) {
	var b strings.Builder
	s.WriteText(&b, what+": ", "event", s.PerEvent)
	fmt.Fprintf(&b, "%s: prices: %s\n", what, capacity.PriceNote)
	_, _ = io.WriteString(w, b.String())
}
