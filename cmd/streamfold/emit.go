package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "emit", summary: "append NDJSON events (envelopes, GitHub deliveries, EventBridge events) to the event table", run: runEmit})
}

const emitHelp = `Usage: streamfold emit [flags] [FILE|-]

Reads NDJSON (from FILE, or standard input when FILE is "-" or absent) and
appends every valid line to the event table. Each line is one of:

  an envelope        {"id":..,"source":..,"type":..,"time":..,"data":{..}}
  a GitHub delivery  {"headers":{"X-GitHub-Event":"workflow_job","X-GitHub-Delivery":".."},"body":{..}}
  an EventBridge     {"detail-type":"Step Functions Execution Status Change","source":"aws.states","detail":{..}}
  event

Lines are validated first; an invalid line is reported by number with the
field at fault and the rest are still written. So is an event too large to
store: one whose item stays above DynamoDB's 400 KB item limit with its data
compressed (the error gives both sizes), and one whose time is more than
--max-future-skew (default 24h) ahead of when it is appended. An event whose
subject and id were already appended with the same content is counted as a
duplicate and not written again; with different content (type, source,
subject, time or data differ) it is a conflict: not written, listed under
"conflicts", and kept with the stored version in the dead letters
("streamfold deadletter list --consumer ingest", reason conflict) for a
person to decide. Step Functions events of state machines without the agent
tags are skipped. An agent execution's input, output and cause are treated
as --sfn-payloads says whatever the line's shape.

Prints a JSON summary on standard output:
  {"accepted":N,"duplicates":N,"skipped":N,"rejected":[{"line":N,"error":".."}],
   "conflicts":[{"line":N,"error":".."}],
   "consumedCapacity":{"writeUnits":..,"readUnits":..,"perEvent":{..},"byTable":{..},..}}
"consumedCapacity" is what the appends cost: the capacity units DynamoDB
reported for them, per accepted event and its on-demand price per million
events (see "streamfold run -h" and docs/cost.md). A duplicate is a
conditional write that failed: DynamoDB reports no units for it (AWS bills
at least one write unit), so it is counted under byOperation's "failed".

Exit status: 0 nothing rejected; 1 some lines rejected (valid ones written);
2 usage error; 3 some writes failed or the table could not be reached;
4 some lines conflict with stored events (and none failed; the others
were written).

Example:
  streamfold simulate --events 1000 --out - | streamfold emit -

Flags:
`

func runEmit(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("emit", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	sfnTags := fs.String("sfn-tags", "", `where Step Functions state machine tags come from: "aws" (ListTagsForResource), a JSON file {"<stateMachineArn>":{"Type":"Agent",..}}, or "none" (reject native Step Functions lines); default "aws" unless --dynamodb-endpoint is set, then "none"`)
	sfnPayloads := fs.String("sfn-payloads", "hash", `what is kept of a Step Functions execution's input, output and cause (agent prompts and answers), on every line shape: "hash" (their SHA-256), "drop" (null) or "keep" (verbatim); see docs/security.md`)
	skew := futureSkewFlag(fs, env)
	batch := fs.Int("batch", 500, "lines per append batch")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	fs.Usage = func() { fmt.Fprint(env.stderr, emitHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return errorf(env, exitUsage, "emit: at most one input file, got %d", fs.NArg())
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "emit: %v", err)
	}
	in := env.stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return errorf(env, exitUsage, "emit: %v", err)
		}
		defer f.Close()
		in = f
	}
	payloads, err := ingest.ParsePayloadPolicy(*sfnPayloads)
	if err != nil {
		return errorf(env, exitUsage, "emit: --sfn-payloads: %v", err)
	}
	maxSkew, err := skew()
	if err != nil {
		return errorf(env, exitUsage, "emit: %v", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "emit: %v", err)
	}
	tags, err := tagSource(*sfnTags, g.ddbEndpoint != "", func() ingest.TagLister { return sfn.NewFromConfig(clients.AWS) })
	if err != nil {
		return errorf(env, exitUsage, "emit: --sfn-tags: %v", err)
	}
	meter := capacity.NewMeter()
	metered := clients.MeteredDynamoDB(meter) // conflicts' dead letters are counted with the appends
	app, err := ingest.NewAppender(metered, ingest.AppenderConfig{
		Table: n.Table(schema.TableEvents), Payloads: payloads, MaxFutureSkew: maxSkew,
		DeadLetters: deadletter.NewTable(metered, n.Table(schema.TableDeadLetters)),
	})
	if err != nil {
		return errorf(env, exitUsage, "emit: %v", err)
	}
	cfg := ingest.EmitConfig{BatchLines: *batch, Tags: tags, StepFunctionsPayloads: payloads}
	if !*quiet {
		cfg.Progress = progressPrinter(env.stderr, "emit")
	}
	sum, err := ingest.Emit(ctx, in, app, cfg)
	out := emitSummary{EmitSummary: sum}
	if sum != nil {
		cc := appendCapacity(meter, sum.Accepted, n)
		out.ConsumedCapacity = &cc
		if !*quiet {
			printAppendCapacity(env.stderr, "emit", cc)
		}
	}
	if werr := writeJSON(env.stdout, out); werr != nil {
		return errorf(env, exitRuntime, "emit: %v", werr)
	}
	switch {
	case err != nil:
		return errorf(env, exitRuntime, "emit: %v", err)
	case len(sum.Failed) > 0:
		return errorf(env, exitRuntime, "emit: %d lines could not be written (first: line %d: %s)", len(sum.Failed), sum.Failed[0].Line, sum.Failed[0].Error)
	case len(sum.Conflicts) > 0:
		return errorf(env, exitConflict, "emit: %d lines conflict with stored events of the same id (first: line %d: %s); both versions are kept: streamfold deadletter list --consumer ingest", len(sum.Conflicts), sum.Conflicts[0].Line, sum.Conflicts[0].Error)
	case len(sum.Rejected) > 0:
		return exitFailed
	}
	return exitOK
}

// emitSummary is emit's JSON summary: ingest's, and what the appends cost.
type emitSummary struct {
	*ingest.EmitSummary
	ConsumedCapacity *capacity.Snapshot `json:"consumedCapacity,omitempty"`
}

// tagSource builds the tag source named by the --sfn-tags flag.
func tagSource(spec string, local bool, aws func() ingest.TagLister) (ingest.TagSource, error) {
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
