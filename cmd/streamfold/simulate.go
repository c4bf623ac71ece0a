package main

import (
	"context"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/toolkit/emit"
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
	start, err := time.Parse("2006-01-02", c.Start)
	if err != nil && c.Start != "" {
		return fail(exitUsage, "simulate: --start: want YYYY-MM-DD, got %q", c.Start)
	}
	o := simulation.Options{Config: simulate.Config{Seed: c.Seed, Events: c.Events, Start: start, Days: c.Days, Order: simulate.Order(c.Order),
		GitHubPayloads: simulate.Payloads(c.Payloads)}, RateGiven: c.Rate != nil, Now: env.now().UTC(), ShapeWindow: c.ShapeWindow,
		Native: c.Native, SFNPayloads: c.SFNPayloads, MaxFutureSkew: c.MaxFutureSkew, Progress: env.progress(out)}
	if c.Rate != nil {
		o.Config.Rate = *c.Rate
	}
	if err := o.Validate(); err != nil {
		return fail(exitUsage, "%w", err)
	}
	n, err := c.naming()
	if err != nil && c.Out == "" {
		return fail(exitUsage, "simulate: %w", err)
	}
	var sum *simulation.Summary
	switch c.Out {
	case "-":
		_, err = simulation.Write(ctx, env.stdout, o)
	case "":
		clients, cerr := c.clients(ctx)
		if err = cerr; err == nil {
			sum, err = simulation.Append(ctx, clients, n, o)
		}
	default:
		sum, err = simulation.WriteFile(ctx, c.Out, o)
	}
	if err != nil {
		return fail(exitUsageOr(err), "simulate: %w", err)
	}
	if sum == nil { // the events went to standard output
		return nil
	}
	if err := env.render(out, sum, nil); err != nil || sum.Appended == nil {
		return err
	}
	printAppendCapacity(env.progress(out), "simulate", *sum.ConsumedCapacity)
	if sum.Appended.Rejected > 0 {
		return fail(exitFailed, "simulate: %d generated events were rejected (a generator bug)", sum.Appended.Rejected)
	}
	return nil
}

// printAppendCapacity prints what appending cost, for people.
var printAppendCapacity = emit.WriteCapacity
