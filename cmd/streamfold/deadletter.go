package main

import (
	"context"
	"errors"

	"github.com/streamfold/streamfold/toolkit/redrive"
)

type deadletterCmd struct {
	List    deadletterListCmd    `cmd:"" help:"List a consumer's dead-lettered records, in stream order (--consumer ingest: by event time)."`
	Replay  deadletterReplayCmd  `cmd:"" help:"Re-drive the quarantined records through their consumer."`
	Redrive deadletterRedriveCmd `cmd:"" help:"Re-drive the batches an event source mapping gave up on, from their on-failure records."`
}

func (deadletterCmd) Help() string { return longHelp("deadletter") }

type deadletterListCmd struct {
	globals
	Consumer string `default:"projector" help:"The consumer whose dead letters to list: projector, archiver or ingest."`
}

func (c *deadletterListCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	clients, err := connect(ctx, &c.globals, "deadletter list")
	if err != nil {
		return err
	}
	n, _ := c.naming()
	l, err := redrive.List(ctx, clients.DynamoDB, n, c.Consumer)
	if err != nil {
		return fail(exitRuntime, "deadletter list: %w", err)
	}
	return env.render(out, l, l.WriteText)
}

type deadletterReplayCmd struct {
	globals
	Consumer   string `default:"projector" help:"The consumer whose dead letters to replay: projector, archiver or ingest."`
	Position   string `help:"Only the dead letter at this position (as list prints it); default every quarantined one."`
	SFNTags    string `name:"sfn-tags" help:"--consumer ingest: where state machine tags come from for entries that recorded none: \"aws\" (ListTagsForResource), a JSON file {\"<stateMachineArn>\":{\"Type\":\"Agent\",..}}, or \"none\"; default \"aws\" unless --dynamodb-endpoint is set, then \"none\"."`
	ArchiveURI string `name:"archive-uri" placeholder:"URI" help:"--consumer archiver: the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
}

func (deadletterReplayCmd) Help() string { return longHelp("deadletter-replay") }

func (c *deadletterReplayCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	o := redrive.ReplayOptions{Consumer: c.Consumer, Position: c.Position, SFNTags: c.SFNTags, ArchiveURI: c.ArchiveURI, Log: warnings(env)}
	if err := o.Validate(); err != nil {
		return workflowErr("deadletter replay", exitUsage, err)
	}
	clients, err := connect(ctx, &c.globals, "deadletter replay")
	if err != nil {
		return err
	}
	res, err := redrive.Replay(ctx, clients, c.settings(), o)
	var none *redrive.NoDeadLetterError
	if errors.As(err, &none) {
		return fail(exitFailed, "deadletter replay: --position: %w (deadletter list --consumer %s prints the positions)", err, c.Consumer)
	} else if err != nil {
		return workflowErr("deadletter replay", exitRuntime, err)
	}
	if err := env.render(out, res, nil); err != nil {
		return err
	}
	switch {
	case len(res.Failed) > 0:
		return exitStatus(exitRuntime)
	case len(res.StillPoison) > 0:
		return exitStatus(exitFailed)
	}
	return nil
}

type deadletterRedriveCmd struct {
	globals
	Consumer   string `default:"projector" help:"The consumer whose batches to redrive: projector or archiver."`
	ArchiveURI string `name:"archive-uri" placeholder:"URI" help:"--consumer archiver: the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
	DryRun     bool   `name:"dry-run" help:"Read the ranges and count their records, hand nothing over."`
	Records    string `arg:"" optional:"" help:"The on-failure records: a file, - (standard input), s3://BUCKET/KEY or s3://BUCKET/PREFIX/."`
}

func (deadletterRedriveCmd) Help() string { return longHelp("deadletter-redrive") }

func (c *deadletterRedriveCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	if c.Records == "" {
		return fail(exitUsage, "deadletter redrive: want one argument, the on-failure records: a file (- for standard input) or s3://BUCKET/KEY or s3://BUCKET/PREFIX/")
	}
	o := redrive.Options{Consumer: c.Consumer, Input: c.Records, Stdin: env.stdin, DryRun: c.DryRun, ArchiveURI: c.ArchiveURI, Log: warnings(env)}
	if err := o.Validate(); err != nil {
		return workflowErr("deadletter redrive", exitUsage, err)
	}
	clients, err := connect(ctx, &c.globals, "deadletter redrive")
	if err != nil {
		return err
	}
	res, err := redrive.Run(ctx, clients, c.settings(), o)
	if err != nil {
		return workflowErr("deadletter redrive", exitRuntime, err)
	}
	if err := env.render(out, res, nil); err != nil {
		return err
	}
	res.WriteErrors(env.stderr, "deadletter redrive")
	switch t := res.Totals; {
	case t.Failed > 0:
		return exitStatus(exitRuntime)
	case t.Trimmed > 0 || t.Incomplete > 0:
		return exitStatus(exitFailed)
	}
	return nil
}
