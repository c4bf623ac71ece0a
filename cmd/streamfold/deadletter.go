package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/projector"
)

func init() {
	register(command{name: "deadletter", summary: "list or replay records the projector or archiver could not process", run: runDeadLetter})
}

const deadLetterHelp = `Usage:
  streamfold deadletter list [flags]     the dead-lettered records of a consumer, in stream order
  streamfold deadletter replay [flags]   re-drive quarantined records through their consumer

A record lands in the dead-letter table when it can never be projected
(poison: undecodable, unknown type, invalid data) or when it still failed
after the runner's retries. Each entry keeps the raw stream record, the error
and its stream position. replay decodes each quarantined record again: one
that is still poison stays quarantined (and is listed with its error); the
others are handed again to their consumer's handler (idempotently: the
projector folds, the archiver rewrites the object of the record's position)
and marked replayed. --consumer picks whose dead letters: "projector"
(default) or "archiver" (whose archive is --archive-uri).

Exit status: 0 ok; 1 replay left records quarantined; 2 usage; 3 service error.

Flags:
`

func runDeadLetter(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "deadletter", args, deadLetterHelp, "list", "replay")
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("deadletter "+sub, flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	consumer := fs.String("consumer", "projector", "consumer whose dead letters to use: projector or archiver")
	archiveURI := fs.String("archive-uri", "", "--consumer archiver: the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	asJSON := fs.Bool("json", false, "print JSON")
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
	projectorConsumer := *consumer
	if projectorConsumer == "archiver" {
		projectorConsumer = "projector"
	}
	stack, err := newProjectorStack(ctx, clients, n, projectorConsumer, log)
	if err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	handle := stack.handler.Handle
	switch *consumer {
	case "projector":
	case "archiver":
		a, err := openArchive(clients, n, *archiveURI)
		if err != nil {
			return errorf(env, exitUsage, "deadletter: --archive-uri: %v", err)
		}
		handle = archiver.NewHandler(a, log).Handle
	default:
		if sub == "replay" {
			return errorf(env, exitUsage, "deadletter replay: --consumer: must be projector or archiver, got %q", *consumer)
		}
	}
	letters, err := stack.dl.List(ctx, *consumer)
	if err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	if sub == "list" {
		if *asJSON {
			if letters == nil {
				letters = []projector.DeadLetter{}
			}
			if err := writeJSON(env.stdout, letters); err != nil {
				return errorf(env, exitRuntime, "deadletter: %v", err)
			}
			return exitOK
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEQUENCE\tEVENT_ID\tSTATUS\tREASON\tERROR")
		for _, d := range letters {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.SequenceNumber, d.EventID, d.Status, d.Reason, d.Error)
		}
		tw.Flush()
		fmt.Fprintf(env.stdout, "%d dead letters for consumer %q in %s\n", len(letters), *consumer, n.Table("dead-letters"))
		return exitOK
	}
	type replayResult struct {
		Replayed    int      `json:"replayed"`
		StillPoison []string `json:"stillPoison"`
		Failed      []string `json:"failed"`
	}
	res := replayResult{StillPoison: []string{}, Failed: []string{}}
	for _, d := range letters {
		if d.Status != "quarantined" {
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
		if err := stack.dl.MarkReplayed(ctx, d); err != nil {
			res.Failed = append(res.Failed, d.Position+": "+err.Error())
			continue
		}
		res.Replayed++
	}
	if err := writeJSON(env.stdout, res); err != nil {
		return errorf(env, exitRuntime, "deadletter: %v", err)
	}
	switch {
	case len(res.Failed) > 0:
		return exitRuntime
	case len(res.StillPoison) > 0:
		return exitFailed
	}
	return exitOK
}
