package main

import (
	"context"

	"github.com/streamfold/streamfold/toolkit/repair"
)

type verifyCmd struct {
	globals
	FromArchive string   `name:"from-archive" placeholder:"URI" help:"The archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
	Only        []string `placeholder:"KINDS" help:"Compare only these row kinds, comma-separated: workflow-metrics, message-counts, run-summaries."`
	foldFlags
}

func (verifyCmd) Help() string { return longHelp("verify") }

func (c *verifyCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	o := repair.VerifyOptions{Archive: c.FromArchive, Kinds: c.Only, Fold: c.fold(env, out)}
	if err := o.Validate(); err != nil {
		return workflowErr("verify", exitUsage, err)
	}
	clients, err := connect(ctx, &c.globals, "verify")
	if err != nil {
		return err
	}
	res, err := repair.Verify(ctx, clients, c.settings(), o)
	if err != nil {
		return workflowErr("verify", exitRuntime, err)
	}
	if err := report(env, out, res.Warnings(), res, res.WriteText); err != nil {
		return err
	}
	if !res.OK {
		return exitStatus(exitFailed)
	}
	return nil
}
