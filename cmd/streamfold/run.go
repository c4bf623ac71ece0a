package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/toolkit/localrun"
)

type runCmd struct {
	globals
	BatchSize          int           `name:"batch-size" default:"100" help:"Projector: records per batch (1-10000), like the event source mapping's BatchSize."`
	BatchWindow        time.Duration `name:"batch-window" default:"0s" help:"Projector: wait up to this long to fill a batch (0-300s)."`
	MaxRetries         int           `name:"max-retries" default:"3" help:"Attempts per batch before the failing record is dead-lettered."`
	Bisect             bool          `default:"true" help:"Split a failing batch in halves to isolate the bad record (--bisect=false: do not)."`
	UntilCaughtUp      bool          `name:"until-caught-up" help:"Exit once every shard is drained."`
	Consumer           string        `default:"projector" help:"Checkpoint name of the projector consumer."`
	StartingPosition   string        `name:"starting-position" default:"trim_horizon" enum:"trim_horizon,latest" help:"Where a shard without a checkpoint starts, for both consumers: trim_horizon (its oldest record) or latest (skip what it holds, recorded as a gap), like an event source mapping's StartingPosition."`
	HeartbeatInterval  time.Duration `name:"heartbeat-interval" default:"1m" help:"Least time between two heartbeats (lag, records) of a consumer on a shard, in the checkpoints table."`
	Archive            bool          `default:"true" help:"Also run the archiver consumer (Parquet on S3; --archive=false: do not)."`
	ArchiveURI         string        `name:"archive-uri" placeholder:"URI" help:"Where the archive goes, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)."`
	ArchiveBatchSize   int           `name:"archive-batch-size" default:"5000" help:"Archiver: records per batch, i.e. per Parquet object and day (1-10000)."`
	ArchiveBatchWindow time.Duration `name:"archive-batch-window" default:"2s" help:"Archiver: buffer up to this long to fill a batch (0-300s)."`
	ArchiveMaxRetries  int           `name:"archive-max-retries" default:"10000" help:"Archiver: attempts per failing batch; its failures are S3 outages, so it retries (with backoff) rather than skip a record, like the deployed mapping's -1."`
	Verbose            bool          `short:"v" help:"Log every batch (JSON lines on standard error)."`
}

func (runCmd) Help() string { return longHelp("run") }

func (c *runCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	n, shards, level, err := c.stack("run", c.Verbose)
	if err != nil {
		return err
	}
	o := localrun.Options{
		Consumer: c.Consumer, BatchSize: c.BatchSize, BatchWindow: c.BatchWindow, MaxRetries: c.MaxRetries, Bisect: c.Bisect,
		UntilCaughtUp: c.UntilCaughtUp, StartingPosition: c.StartingPosition, HeartbeatInterval: c.HeartbeatInterval,
		ArchiveBatchSize: c.ArchiveBatchSize, ArchiveBatchWindow: c.ArchiveBatchWindow, ArchiveMaxRetries: c.ArchiveMaxRetries,
		GSIShards: shards, Logger: slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: level})),
	}
	if err := o.Validate(); err != nil {
		return failed("run", err)
	}
	clients, err := c.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "run: %v", err)
	}
	if c.Archive {
		if o.Archive, err = c.openArchive(clients, n, c.ArchiveURI); err != nil {
			return fail(exitUsage, "run: --archive-uri: %v", err)
		}
		defer o.Archive.Close()
	}
	if !out.Quiet {
		o.Progress = localrun.ProgressPrinter(env.stderr, c.DynamoDBEndpoint != "")
	}
	res, err := localrun.Run(ctx, clients, n, o)
	if res == nil {
		return failed("run", err)
	}
	if rerr := env.render(out, res, res.WriteText); rerr != nil {
		return rerr
	}
	if err != nil {
		return fail(exitRuntime, "run: %v", err)
	}
	return nil
}
