package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/toolkit/emit"
)

type emitCmd struct {
	globals
	appendFlags
	SFNTags string `name:"sfn-tags" help:"Where Step Functions state machine tags come from: \"aws\" (ListTagsForResource), a JSON file {\"<stateMachineArn>\":{\"Type\":\"Agent\",..}}, or \"none\" (reject native Step Functions lines); default \"aws\" unless --dynamodb-endpoint is set, then \"none\"."`
	Batch   int    `default:"500" help:"Lines per append batch."`
	File    string `arg:"" optional:"" default:"-" help:"The NDJSON file; \"-\" or none is standard input."`
}

func (emitCmd) Help() string { return longHelp("emit") }

func (c *emitCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, err := c.naming()
	if err != nil {
		return fail(exitUsage, "emit: %v", err)
	}
	in := env.stdin
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return fail(exitUsage, "emit: %v", err)
		}
		defer f.Close()
		in = f
	}
	o := emit.Options{Input: in, SFNTags: c.SFNTags, SFNPayloads: c.SFNPayloads, MaxFutureSkew: c.MaxFutureSkew, BatchLines: c.Batch}
	if err := o.Validate(); err != nil {
		return failed("emit", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "emit: %v", err)
	}
	if !out.Quiet {
		o.Progress = progressPrinter(env.stderr, "emit")
	}
	res, err := emit.Run(ctx, clients, n, c.DynamoDBEndpoint != "", o)
	if res == nil {
		return failed("emit", err)
	}
	if !out.Quiet {
		printAppendCapacity(env.stderr, "emit", *res.ConsumedCapacity)
	}
	if werr := writeJSON(env.stdout, res); werr != nil {
		return fail(exitRuntime, "emit: %v", werr)
	}
	switch sum := res.EmitSummary; {
	case err != nil:
		return fail(exitRuntime, "emit: %v", err)
	case len(sum.Failed) > 0:
		return fail(exitRuntime, "emit: %d lines could not be written (first: line %d: %s)", len(sum.Failed), sum.Failed[0].Line, sum.Failed[0].Error)
	case len(sum.Conflicts) > 0:
		return fail(exitConflict, "emit: %d lines conflict with stored events of the same id (first: line %d: %s); both versions are kept: streamfold deadletter list --consumer ingest", len(sum.Conflicts), sum.Conflicts[0].Line, sum.Conflicts[0].Error)
	case len(sum.Rejected) > 0:
		return exitStatus(exitFailed)
	}
	return nil
}

// appendFlags are the flags of the commands that append events (emit,
// simulate, serve).
type appendFlags struct {
	SFNPayloads   string        `name:"sfn-payloads" default:"hash" enum:"hash,drop,keep" help:"What is kept of a Step Functions execution's input, output and cause (agent prompts and answers), on every line shape: \"hash\" (their SHA-256), \"drop\" (null) or \"keep\" (verbatim); see docs/security.md."`
	MaxFutureSkew time.Duration `name:"max-future-skew" default:"24h" sfenv:"STREAMFOLD_MAX_FUTURE_SKEW" help:"Reject an event whose time is more than this ahead of when it is appended (its recordedat), e.g. 24h."`
}

// progressPrinter returns an emit progress callback that prints at most one
// line a second.
func progressPrinter(w io.Writer, what string) func(int, *ingest.EmitSummary) {
	start := time.Now()
	last := start
	return func(lines int, s *ingest.EmitSummary) {
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		el := time.Since(start).Seconds()
		fmt.Fprintf(w, "%s: %d lines read, %d accepted, %d duplicates, %d rejected, %d conflicts (%.0f lines/s)\n",
			what, lines, s.Accepted, s.Duplicates, len(s.Rejected), len(s.Conflicts), float64(lines)/el)
	}
}
