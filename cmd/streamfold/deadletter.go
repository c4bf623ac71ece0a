package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opswatch"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/emit"
	"github.com/streamfold/streamfold/toolkit/localrun"
)

func init() {
	register(command{name: "deadletter", summary: "list or replay records the projector, archiver or ingest function could not process; redrive failed stream batches", run: runDeadLetter})
}

const deadLetterHelp = `Usage:
  streamfold deadletter list [flags]            the dead-lettered records of a consumer, in stream order
  streamfold deadletter replay [flags]          re-drive quarantined records through their consumer
  streamfold deadletter redrive [flags] FILE|-|s3://BUCKET/KEY|s3://BUCKET/PREFIX/
                                              re-drive the batches an event source mapping gave up on

A record lands in the dead-letter table when it can never be projected
(poison: undecodable, unknown type, invalid data) or when it still failed
after the runner's retries. Each entry keeps the raw stream record, the error
and its stream position. replay decodes each quarantined record again: one
that is still poison stays quarantined (and is listed with its error); the
others are handed again to their consumer's handler (idempotently: the
projector folds, the archiver rewrites the object of the record's position)
and marked replayed. --consumer picks whose dead letters: "projector"
(default), "archiver" (whose archive is --archive-uri) or "ingest".
--position replays only the dead letter at that position (list prints it;
the dashboard's operations page shows each letter's command), e.g.

  streamfold deadletter replay --consumer projector --position '0000000000000000000000000000000000000100#4f2c...'

--consumer ingest: the EventBridge events the ingest function could never
append (an agent's Step Functions event that fails validation, an event
that is not a Step Functions status change, a state machine deleted before
its tags were read, an event too large to store). Each entry keeps the
event byte for byte, the reason, the error and the state machine's tags as
the function found them. list shows them by event time (POSITION is
time#id). replay re-submits each quarantined one through the same Step
Functions adapter, with the recorded tags (or, when none were recorded,
those of --sfn-tags), appending to the event table: "appended",
"already_appended" and "skipped" (not an agent's machine) are marked
replayed; one that still fails validation stays quarantined (stillPoison,
exit 1), so replay after fixing the cause (a streamfold version that
accepts the event, the state machine's tags). The summary lists what
happened to each entry under "results".

redrive is for the other way records fail in AWS: a batch that still failed
after the event source mapping's retries (or grew older than its maximum
record age) is skipped, and its on-failure destination gets a record of it.
The deployment's destination is an S3 bucket (terraform/onfailure.tf),
whose objects carry the whole batch (the records, in "payload"); an SQS or
SNS destination gets only the shard and sequence range. redrive reads those
records from an S3 object (s3://BUCKET/KEY), every object under a prefix
(s3://BUCKET/PREFIX/), or FILE (standard input with -), in whatever shape
you have them: the records themselves, one per line or a JSON array, SQS
messages ({"Body"}), SNS notifications ({"Message"}), or the output of aws
sqs receive-message. A batch whose record carries its records is redriven
from them (source "payload"), at any age; otherwise its range is read from
the stream (source "stream"), which keeps records for 24 hours: a range
past that is reported "trimmed", with the remedy (rebuild from the
archive). The records go to the consumer's handler in batches of 100,
resuming at a record the handler reports failed (up to 5 attempts), as the
mapping would, each marked as redriven: the consumer's handler records one
gap of kind "onfailure" per failed batch in the checkpoints table (its
shard, range and record times; reconcile narrows its window with it) and
logs it. Re-driving is idempotent. --dry-run reads the batches and
counts their records without handing them over. Delete the objects (or
queue messages) once redrive reported them "redriven".

  streamfold deadletter redrive --consumer projector s3://streamfold-prod-failures/aws/lambda/
  aws sqs receive-message --queue-url "$QUEUE" --max-number-of-messages 10 > msgs.json
  streamfold deadletter redrive --consumer projector msgs.json

Exit status: 0 ok; 1 replay left records quarantined or --position names
no dead letter, or redrive found a range trimmed or incomplete; 2 usage; 3 service error (redrive: a range that
could not be read or handled).

Flags:
`

func runDeadLetter(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "deadletter", args, deadLetterHelp, "list", "replay", "redrive")
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("deadletter "+sub, flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	consumer := fs.String("consumer", "projector", "consumer whose dead letters to use: projector, archiver or ingest")
	sfnTags := fs.String("sfn-tags", "", `--consumer ingest, replay: where state machine tags come from for entries that recorded none: "aws" (ListTagsForResource), a JSON file {"<stateMachineArn>":{"Type":"Agent",..}}, or "none"; default "aws" unless --dynamodb-endpoint is set, then "none"`)
	archiveURI := fs.String("archive-uri", "", "--consumer archiver: the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	asJSON := fs.Bool("json", false, "print JSON")
	dryRun := fs.Bool("dry-run", false, "redrive: read the ranges and count their records, hand nothing over")
	position := fs.String("position", "", "replay: only the dead letter at this position (as list prints it); default every quarantined one")
	fs.Usage = func() { fmt.Fprint(env.stderr, deadLetterHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "deadletter: %v", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *position != "" && sub != "replay" {
		return errorf(env, exitUsage, "deadletter %s: --position: is a flag of replay only", sub)
	}
	if *consumer == ingest.DeadLetterConsumer {
		if sub == "redrive" {
			return errorf(env, exitUsage, "deadletter redrive: --consumer: must be projector or archiver (the ingest function's failures are dead letters: use list and replay), got %q", *consumer)
		}
		tags, err := emit.TagSource(*sfnTags, g.DynamoDBEndpoint != "", func() ingest.TagLister { return sfn.NewFromConfig(clients.AWS) })
		if err != nil {
			return errorf(env, exitUsage, "deadletter: --sfn-tags: %v", err)
		}
		return runIngestDeadLetters(ctx, env, sub, clients.DynamoDB, n, tags, *position, *asJSON, log)
	}
	projectorConsumer := *consumer
	if projectorConsumer == "archiver" {
		projectorConsumer = "projector"
	}
	// redrive marks every batch it hands over (opswatch.WithRedrive): the
	// consumer's handler records one GapOnFailure per failed batch, which
	// reconcile reads. Only the marked batches are looked at (no heartbeat).
	var watch *opswatch.Watch
	if sub == "redrive" && (*consumer == "projector" || *consumer == "archiver") {
		if watch, err = opswatch.New(opsrec.Store{API: clients.DynamoDB, Table: n.Table(schema.TableCheckpoints)},
			opswatch.Config{Consumer: *consumer, HeartbeatInterval: -1, Logger: log}); err != nil {
			return errorf(env, exitUsage, "deadletter: %v", err)
		}
	}
	projWatch := watch
	if *consumer != "projector" {
		projWatch = nil
	}
	shards, err := g.gsiShards()
	if err != nil {
		return errorf(env, exitUsage, "deadletter redrive: %v", err)
	}
	stack, err := localrun.NewProjector(ctx, clients.DynamoDB, n, projector.Config{GSIShards: shards}, projectorConsumer, nil, projWatch, log)
	if err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	handle := stack.Handler.Handle
	switch *consumer {
	case "projector":
	case "archiver":
		a, err := g.openArchive(clients, n, *archiveURI)
		if err != nil {
			return errorf(env, exitUsage, "deadletter: --archive-uri: %v", err)
		}
		defer a.Close()
		handle = archiver.NewHandler(a, log).Watch(watch).Handle
	default:
		if sub != "list" {
			return errorf(env, exitUsage, "deadletter %s: --consumer: must be projector, archiver or ingest, got %q", sub, *consumer)
		}
	}
	if sub == "redrive" {
		return runRedrive(ctx, env, fs.Args(), clients.Streams, clients.S3, handle, *consumer, *dryRun, log)
	}
	letters, err := stack.DeadLetters.List(ctx, *consumer)
	if err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	if sub == "list" {
		return printDeadLetters(env, letters, *consumer, n.Table(schema.TableDeadLetters), *asJSON,
			[]string{"SEQUENCE", "EVENT_ID", "STATUS", "REASON", "ERROR"},
			func(d deadletter.Letter) []string {
				return []string{d.SequenceNumber, d.EventID, d.Status, d.Reason, d.Error}
			})
	}
	if letters, err = atPosition(letters, *position, *consumer); err != nil {
		return errorf(env, exitFailed, "deadletter replay: %v", err)
	}
	res := replayResult{StillPoison: []string{}, Failed: []string{}}
	for _, d := range letters {
		if d.Status != deadletter.StatusQuarantined {
			continue
		}
		rec, err := d.LambdaRecord()
		if err != nil {
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
			continue
		}
		if _, _, err := projector.Decode(rec); errors.Is(err, projector.ErrPoison) {
			res.StillPoison = append(res.StillPoison, d.Position+": "+err.Error())
			continue
		}
		resp, err := handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		if err != nil || len(resp.BatchItemFailures) > 0 {
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %s failed (%v)", d.Position, *consumer, err))
			continue
		}
		if err := stack.DeadLetters.MarkReplayed(ctx, d); err != nil {
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
			continue
		}
		res.Replayed++
	}
	return printReplay(env, res, res)
}

// atPosition keeps the letter at position ("" keeps every letter); a
// position no letter has is an error naming it.
func atPosition(letters []deadletter.Letter, position, consumer string) ([]deadletter.Letter, error) {
	if position == "" {
		return letters, nil
	}
	for _, d := range letters {
		if d.Position == position {
			return []deadletter.Letter{d}, nil
		}
	}
	return nil, fmt.Errorf("--position: consumer %q has no dead letter at %q (deadletter list --consumer %s prints the positions)", consumer, position, consumer)
}

// replayResult is the summary deadletter replay prints.
type replayResult struct {
	Replayed    int      `json:"replayed"`
	StillPoison []string `json:"stillPoison"`
	Failed      []string `json:"failed"`
}

// printReplay prints a replay's summary v as JSON and returns the exit
// status its counts r give: exitRuntime when some entry failed, exitFailed
// when some is still poison, else exitOK.
func printReplay(env *cliEnv, v any, r replayResult) int {
	if err := writeJSON(env.stdout, v); err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	switch {
	case len(r.Failed) > 0:
		return exitRuntime
	case len(r.StillPoison) > 0:
		return exitFailed
	}
	return exitOK
}

// printDeadLetters prints "deadletter list": the letters as JSON (an empty
// array, never null), or a table of the given columns and a count line.
func printDeadLetters(env *cliEnv, letters []deadletter.Letter, consumer, table string, asJSON bool, cols []string, row func(deadletter.Letter) []string) int {
	if asJSON {
		if letters == nil {
			letters = []deadletter.Letter{}
		}
		if err := writeJSON(env.stdout, letters); err != nil {
			return errorf(env, exitRuntime, "deadletter: %v", err)
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, d := range letters {
		fmt.Fprintln(tw, strings.Join(row(d), "\t"))
	}
	tw.Flush()
	fmt.Fprintf(env.stdout, "%d dead letters for consumer %q in %s\n", len(letters), consumer, table)
	return exitOK
}
