package main

import (
	"context"

	"github.com/streamfold/streamfold/toolkit/inspect"
)

type summaryCmd struct {
	globals
	Date string `placeholder:"YYYY-MM-DD" help:"Only this day's metrics; default every day."`
}

func (summaryCmd) Help() string { return longHelp("summary") }

func (c *summaryCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, err := c.naming()
	if err != nil {
		return fail(exitUsage, "summary: %v", err)
	}
	o := inspect.ProjectionsOptions{Date: c.Date}
	if err := o.Validate(); err != nil {
		return failed("summary", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "summary: %v", err)
	}
	sum, err := inspect.Projections(ctx, clients.DynamoDB, n, o)
	if err != nil {
		return failed("summary", err)
	}
	return env.render(out, sum, sum.WriteText)
}
