package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

// newRun binds package reconcile to the deployment: the event table and
// the projections (DynamoDB), the archive (its Iceberg tables, through the
// archiver the archiver function runs), the projector (its commit is the
// heal path of the projections) and the operations records (the checkpoints
// table: the gaps the consumers noticed, where the result is stored). This
// is the only file that calls package reconcile.
func newRun(c *awsclient.Clients, s settings, log *slog.Logger) (runFunc, error) {
	a, err := archiver.New(c.S3, s.archive)
	if err != nil {
		return nil, err
	}
	store, err := projector.NewDynamoStore(c.DynamoDB, s.naming)
	if err != nil {
		return nil, err
	}
	p, err := projector.New(store, projector.Config{})
	if err != nil {
		return nil, err
	}
	cfg := reconcile.Config{
		DynamoDB:  c.DynamoDB,
		Naming:    s.naming,
		Archive:   a,
		Projector: p,
		Ops:       &opsrec.Store{API: c.DynamoDB, Table: s.naming.Table(schema.TableCheckpoints)},
		Logger:    log,
		Now:       time.Now,
	}
	return func(ctx context.Context, w window) (opsrec.Result, error) {
		// Segments, Settle and IDsPerKind: package reconcile's defaults.
		rep, err := reconcile.Reconcile(ctx, cfg, reconcile.Options{From: w.From, To: w.To, Heal: w.Heal})
		return rep.Result, err
	}, nil
}
