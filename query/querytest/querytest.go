// Package querytest loads workloads into DynamoDB tables the way the
// pipeline would, for tests of the read side (package query, the HTTP API,
// the CLI, the dashboard's end-to-end test): events appended to the event
// table with ingest.Appender, then projected with projector.Projector on a
// DynamoStore (directly, without consuming the stream, which gives the same
// projections and is faster).
//
// Every event gets the same recordedat, so that the projections and the
// event table agree exactly and outputs are reproducible.
package querytest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

//go:embed fixture.ndjson
var fixture []byte

// FixtureRecordedAt is the recordedat Load gives the fixture in tests with
// golden output. The fixture's messages are dated months after it, so
// Append and Project allow FixtureSkew between an event's time and its
// recordedat.
var FixtureRecordedAt = time.Date(2030, time.January, 16, 0, 0, 0, 0, time.UTC)

// FixtureSkew is how far ahead of its recordedat an event loaded here may
// be dated (the most ingest and the projector can be configured to allow):
// the fixture is recorded before some of its events happen.
const FixtureSkew = ingest.MaxMaxFutureSkew

// Fixture returns a small workload in the seeds' shapes, dated 2030-01-15
// (and 2030-10-21 for messages), so that no TTL ever expires it:
//
//   - seed 002: five agent executions of my-agent and sql-agent (SUCCEEDED,
//     FAILED, RUNNING, TIMED_OUT);
//   - seed 001: a completed step-functions execution with two albums and a
//     completed validation task, a completed and a failed execution, a
//     durable-functions execution waiting on a pending task, a running
//     step-functions execution;
//   - seed 003: installation 12345, run 54321 (three jobs, one queued twice
//     under two delivery ids, runner events with a spot interruption, a
//     deployment), and job 67999 of run 54400 in_progress since 08:00;
//   - seed 004: three messages (completed, failed after a retry, processing).
func Fixture() []schema.Event {
	evs, err := testenv.ReadEvents(bytes.NewReader(fixture))
	if err != nil {
		panic("querytest: fixture: " + err.Error())
	}
	return evs
}

// DynamoAPI is what loading needs: the appender's PutItem and the
// DynamoStore's calls. *dynamodb.Client satisfies it.
type DynamoAPI interface {
	ingest.PutItemAPI
	projector.DynamoAPI
}

// Append writes events to the event table with ingest.Appender, stamped
// with recorded. Rejected or failed events are an error.
func Append(ctx context.Context, db DynamoAPI, n schema.Naming, events []schema.Event, recorded time.Time) error {
	app, err := ingest.NewAppender(db, ingest.AppenderConfig{Table: n.Table(schema.TableEvents), Concurrency: 32, Now: func() time.Time { return recorded },
		MaxFutureSkew: FixtureSkew})
	if err != nil {
		return err
	}
	res, err := app.Append(ctx, events)
	if err != nil {
		return err
	}
	if k := res.Count(ingest.Rejected); k > 0 {
		for i, o := range res.Outcomes {
			if o == ingest.Rejected {
				return fmt.Errorf("querytest: %d events rejected, first (#%d): %w", k, i, res.Errors[i])
			}
		}
	}
	return nil
}

// Inputs validates events as the appender and the stream handler would and
// returns them as projector inputs stamped with recorded; Step Functions
// events of non-agent state machines are dropped, as the handler drops them.
func Inputs(events []schema.Event, recorded time.Time) ([]projector.Input, error) {
	var out []projector.Input
	for i := range events {
		e := events[i]
		if err := ingest.Prepare(&e); err != nil {
			return nil, fmt.Errorf("querytest: event %d (%s): %w", i, e.ID, err)
		}
		r := recorded
		e.RecordedAt = &r
		in, ok, err := projector.InputOf(e, strconv.Itoa(i))
		if err != nil {
			return nil, fmt.Errorf("querytest: %w", err)
		}
		if ok {
			out = append(out, in)
		}
	}
	return out, nil
}

// Project folds inputs into store with a Projector.
func Project(ctx context.Context, store projector.Store, inputs []projector.Input) error {
	p, err := projector.New(store, projector.Config{Concurrency: 8, MaxFutureSkew: FixtureSkew})
	if err != nil {
		return err
	}
	out := p.Project(ctx, inputs)
	if len(out.Quarantined) > 0 {
		return fmt.Errorf("querytest: project: %d inputs quarantined", len(out.Quarantined))
	}
	if len(out.Failed) > 0 || len(out.Poison) > 0 {
		for s, err := range out.Failed {
			return fmt.Errorf("querytest: project: %d aggregates failed, e.g. %s: %w", len(out.Failed), s, err)
		}
		for s, err := range out.Poison {
			return fmt.Errorf("querytest: project: %d aggregates poisoned, e.g. %s: %w", len(out.Poison), s, err)
		}
	}
	return nil
}

// Load appends events to the event table of n and projects them into its
// projection tables.
func Load(ctx context.Context, db DynamoAPI, n schema.Naming, events []schema.Event, recorded time.Time) error {
	if err := Append(ctx, db, n, events, recorded); err != nil {
		return err
	}
	inputs, err := Inputs(events, recorded)
	if err != nil {
		return err
	}
	store, err := projector.NewDynamoStore(db, n)
	if err != nil {
		return err
	}
	return Project(ctx, store, inputs)
}
