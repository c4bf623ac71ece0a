package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
)

// newRun binds package reconcile to the deployment: the event table and
// the projector's states (DynamoDB), the archive (its Iceberg tables,
// through the archiver the archiver function runs), the projector (its
// Check is the evidence of "applied", its commit the heal path of the
// projections) and the operations records (the checkpoints table: the gaps
// the consumers noticed, where the result is stored). This is the only
// file that calls package reconcile.
//
// The archive (and its catalog) is opened once per process; each run gets
// its own capacity meter and the clients metered into it, so that the
// result's units are that run's, however often a warm function runs.
func newRun(c *awsclient.Clients, s settings, log *slog.Logger) (runFunc, error) {
	a, err := archiver.New(c.S3, s.archive)
	if err != nil {
		return nil, err
	}
	ops := &opsrec.Store{API: c.DynamoDB, Table: s.naming.Table(schema.TableCheckpoints)}
	return func(ctx context.Context, w window) (opsrec.Result, error) {
		meter := capacity.NewMeter()
		db := c.MeteredDynamoDB(meter)
		store, err := projector.NewDynamoStore(db, s.naming)
		if err != nil {
			return opsrec.Result{}, err
		}
		p, err := projector.New(store, projector.Config{GSIShards: s.gsiShards})
		if err != nil {
			return opsrec.Result{}, err
		}
		cfg := reconcile.Config{DynamoDB: db, Naming: s.naming, Archive: a, Projector: p, Ops: ops, Meter: meter, Logger: log, Now: time.Now}
		// A zero To is package reconcile's default: now less its settle
		// time (the consumers' last minutes are left to them). Segments and
		// IDsPerKind: its defaults too.
		rep, err := reconcile.Reconcile(ctx, cfg, reconcile.Options{From: w.From, To: w.To, Heal: w.Heal})
		return rep.Result, err
	}, nil
}
