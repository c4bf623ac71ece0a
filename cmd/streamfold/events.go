package main

import (
	"context"

	"github.com/streamfold/streamfold/toolkit/inspect"
)

type eventsCmd struct {
	Summary eventsSummaryCmd `cmd:"" help:"Count the events per domain and type, the subjects and the time range (scans the table)."`
	List    eventsListCmd    `cmd:"" help:"Every event of one aggregate, oldest first (a single key query)."`
}

func (eventsCmd) Help() string { return longHelp("events") }

type eventsSummaryCmd struct{ globals }

func (c *eventsSummaryCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, err := c.naming()
	if err != nil {
		return fail(exitUsage, "events: %v", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "events: %v", err)
	}
	sum, err := inspect.EventCounts(ctx, clients.DynamoDB, n)
	if err != nil {
		return fail(exitRuntime, "events: %v", err)
	}
	return env.render(out, sum, sum.WriteText)
}

type eventsListCmd struct {
	globals
	Subject string `arg:"" help:"The aggregate's subject, e.g. github/12345/job/67890."`
}

func (c *eventsListCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, err := c.naming()
	if err != nil {
		return fail(exitUsage, "events list: %v", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "events list: %v", err)
	}
	res, err := inspect.Subject(ctx, clients.DynamoDB, n, inspect.SubjectOptions{Subject: c.Subject})
	if err != nil {
		return failed("events list", err)
	}
	return env.render(out, res.Events, res.WriteText)
}
