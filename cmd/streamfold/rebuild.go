package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/streamfold/streamfold/archiver/rebuild"
	"github.com/streamfold/streamfold/toolkit/repair"
)

type rebuildCmd struct {
	globals
	FromArchive  string `name:"from-archive" placeholder:"URI" help:"The archive, s3://BUCKET/PREFIX (required)."`
	Into         string `default:"fresh" help:"fresh: new tables (--target-prefix, --target-stage); in-place: the live tables."`
	TargetPrefix string `name:"target-prefix" help:"--into fresh: table prefix of the new tables (default PREFIX-rebuild)."`
	TargetStage  string `name:"target-stage" help:"--into fresh: stage of the new tables (default --stage)."`
	Force        bool   `help:"--into fresh: rebuild even when the target tables hold items."`
	foldFlags
}

func (rebuildCmd) Help() string { return longHelp("rebuild") }

func (c *rebuildCmd) Run(ctx context.Context, env *cliEnv, out *output) error {
	live, err := c.naming()
	if err != nil {
		return fail(exitUsage, "rebuild: %w", err)
	}
	plan, err := repair.NewRebuildPlan(live, repair.RebuildOptions{Archive: c.FromArchive, Into: c.Into,
		TargetPrefix: c.TargetPrefix, TargetStage: c.TargetStage, Force: c.Force, Fold: c.fold(env, out)})
	if err != nil {
		return workflowErr("rebuild", exitUsage, err)
	}
	clients, err := connect(ctx, &c.globals, "rebuild")
	if err != nil {
		return err
	}
	res, err := plan.Execute(ctx, clients, c.settings())
	if res == nil {
		code := exitRuntime
		if errors.Is(err, rebuild.ErrTargetNotEmpty) {
			code = exitFailed
		}
		return workflowErr("rebuild", code, err)
	}
	if rerr := report(env, out, res.Warnings(), res, res.WriteText); rerr != nil {
		return rerr
	}
	if err != nil { // rebuild.ErrIncomplete: run it again
		return workflowErr("rebuild", exitFailed, err)
	}
	return nil
}

// foldFlags tune the fold of the archive (repair.Fold, whose DefaultFold the defaults are).
type foldFlags struct {
	Chunk     int `default:"2000" help:"Events per projector call (whole subjects)."`
	Workers   int `default:"2" help:"Projector calls at once."`
	Buffer    int `default:"1000000" help:"Events held in memory before they are grouped by subject and projected."`
	Retention int `help:"Days an item with a TTL lives after its events were recorded (default: the table's, 90 for jobs, runs, deployments and messages); what would be born expired is skipped and counted."`
	GSIShards int `name:"gsi-shards" help:"Write shards of the sharded indexes, as the deployment's gsi_shards (0 or 1: off, the seeds' items; 2-16: items carry gsiShard; docs/deployment.md)."`
}

func (f foldFlags) fold(env *cliEnv, out *output) repair.Fold {
	return repair.Fold{ChunkEvents: f.Chunk, Workers: f.Workers, BufferEvents: f.Buffer, RetentionDays: f.Retention, GSIShards: f.GSIShards, Progress: env.progress(out)}
}

// report prints a result's warnings on standard error, then the result.
func report(env *cliEnv, out *output, warnings []string, v any, text func(w io.Writer) error) error {
	for _, w := range warnings {
		fmt.Fprintln(env.stderr, w)
	}
	return env.render(out, v, text)
}
