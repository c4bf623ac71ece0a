package main

import (
	"cmp"
	"context"
	"io"
	"time"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/internal/laptop/devstack"
	"github.com/streamfold/streamfold/toolkit/localstack"
)

// devCmd holds the flags of dev up, status and down.
type devCmd struct {
	Up     devSub `cmd:"" help:"Start DynamoDB Local and MinIO on 127.0.0.1, create every table and the archive bucket."`
	Status devSub `cmd:"" help:"Say what is running and answering."`
	Down   devSub `cmd:"" help:"Stop the processes that \"dev up\" started (and nothing else)."`

	ToolsDir     string        `name:"tools-dir" sfenv:"STREAMFOLD_TOOLS_DIR" help:"Where \"make tools\" installed DynamoDB Local, MinIO and Terraform; default TOOLS_DIR, else .tools."`
	StateDir     string        `name:"state-dir" sfenv:"STREAMFOLD_STATE_DIR" help:"Where pid files, logs and MinIO data go; default TOOLS_DIR/run."`
	DynamoDBPort int           `name:"dynamodb-port" default:"8766" sfenv:"STREAMFOLD_DYNAMODB_PORT" help:"DynamoDB Local port on 127.0.0.1."`
	S3Port       int           `name:"s3-port" default:"9766" sfenv:"STREAMFOLD_S3_PORT" help:"MinIO port on 127.0.0.1."`
	Prefix       string        `default:"streamfold" sfenv:"STREAMFOLD_PREFIX" help:"Table name prefix."`
	Stage        string        `default:"dev" sfenv:"STREAMFOLD_STAGE" help:"Stage."`
	Timeout      time.Duration `default:"90s" help:"How long up waits for the services."`
	Archive      string        `sfenv:"STREAMFOLD_DEV_ARCHIVE" help:"Where the archive goes: minio (S3 on MinIO) or fs (a local filesystem warehouse, STATE_DIR/warehouse; MinIO is not started); default what the last up of the state dir chose, else minio."`
}

func (devCmd) Help() string { return longHelp("dev") }

// devSub is dev up, status or down, as selected.
type devSub struct{}

func (devSub) Run(ctx context.Context, env *cliEnv, out *output, c *devCmd, kctx *kong.Context) error {
	sub := kctx.Selected().Name
	o := localstack.Options{Prefix: c.Prefix, Stage: c.Stage, Archive: c.Archive, Stack: devstack.Config{
		ToolsDir: cmp.Or(c.ToolsDir, env.getenv("TOOLS_DIR")), StateDir: c.StateDir,
		DynamoDBPort: c.DynamoDBPort, S3Port: c.S3Port, StartTimeout: c.Timeout}}
	if err := o.Validate(); err != nil {
		return fail(exitUsage, "%w", err)
	}
	do := map[string]func(context.Context, localstack.Options) (*localstack.Report, error){
		"up": localstack.Up, "status": localstack.Status, "down": localstack.Down}[sub]
	rep, err := do(ctx, o)
	if err != nil {
		return fail(exitUsageOr(err), "dev %s: %w", sub, err)
	}
	if err := env.render(out, rep, func(w io.Writer) error { return rep.WriteText(w, sub == "down") }); err != nil {
		return err
	}
	if sub == "status" && !rep.Healthy() {
		return exitStatus(exitFailed)
	}
	return nil
}
