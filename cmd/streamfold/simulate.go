package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "simulate", summary: "generate a deterministic, realistic workload over all four domains", run: runSimulate})
}

const simulateHelp = `Usage: streamfold simulate [flags]

Generates a deterministic workload (the same --seed and --start give the same
events):
GitHub job lifecycles with redelivered and out-of-order webhooks, spot
interruptions and reruns; Step Functions agent executions with failures and
timeouts; sf and ldf album workflows with costs and validation tasks; rez_agent
message transitions with failures and retries. Events come in arrival order,
redeliveries included.

Without --out the events are appended to the event table through the same
path as emit, and a JSON summary is printed, with what the appends cost:
"consumedCapacity" holds the capacity units DynamoDB reported for them and
"perEvent" the units per accepted event and their on-demand price per
million events (see "streamfold run -h" and docs/cost.md). With --out (a
file, or - for standard output) they are written as NDJSON that emit
accepts.

Examples:
  streamfold simulate --seed 7 --events 20000 --days 3
  streamfold simulate --events 500 --out - --native | streamfold emit -

Flags:
`

// appendCounts is what the event table made of the generated events.
type appendCounts struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
}

type simulateSummary struct {
	Generated    int                   `json:"generated"`
	Redeliveries int                   `json:"redeliveries"`
	OutOfOrder   int                   `json:"outOfOrder"`
	PerDomain    map[schema.Domain]int `json:"perDomain"`
	Appended     *appendCounts         `json:"appended,omitempty"`
	// ConsumedCapacity is what the appends consumed, per accepted event.
	ConsumedCapacity *capacity.Snapshot `json:"consumedCapacity,omitempty"`
	Seconds          float64            `json:"seconds"`
	EventsPerSec     float64            `json:"eventsPerSecond"`
	Table            string             `json:"table,omitempty"`
	Out              string             `json:"out,omitempty"`
}

func runSimulate(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	seed := fs.Int64("seed", 1, "random seed; the same seed and flags give the same events")
	events := fs.Int("events", 10000, "number of events to produce, redeliveries included")
	start := fs.String("start", "", "first day (YYYY-MM-DD, UTC); default: --days days before today, so that projections' TTLs lie in the future")
	days := fs.Int("days", 1, "number of days the workload spans")
	out := fs.String("out", "", `write NDJSON to this file ("-" = standard output) instead of appending`)
	native := fs.Bool("native", false, "with --out: write GitHub webhooks as native deliveries {headers, body}")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	fs.Usage = func() { fmt.Fprint(env.stderr, simulateHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "simulate: unexpected argument %q", fs.Arg(0))
	}
	var (
		day time.Time
		err error
	)
	if *start == "" {
		day = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -max(*days, 1))
	} else if day, err = time.Parse("2006-01-02", *start); err != nil {
		return errorf(env, exitUsage, "simulate: --start: want YYYY-MM-DD, got %q", *start)
	}
	cfg := simulate.Config{Seed: *seed, Events: *events, Start: day, Days: *days}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "%v", err)
	}
	began := time.Now()
	if *out != "" {
		return simulateToFile(ctx, env, cfg, *out, *native, began)
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "simulate: %v", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "simulate: %v", err)
	}
	meter := capacity.NewMeter()
	app, err := ingest.NewAppender(clients.MeteredDynamoDB(meter), ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		return errorf(env, exitUsage, "simulate: %v", err)
	}
	counts := &appendCounts{}
	sum := simulateSummary{Table: n.Table(schema.TableEvents), Appended: counts}
	var batch []schema.Event
	lastProgress := time.Now()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := app.Append(ctx, batch)
		counts.Accepted += res.Count(ingest.Accepted)
		counts.Duplicates += res.Count(ingest.Duplicate)
		counts.Rejected += res.Count(ingest.Rejected)
		batch = batch[:0]
		if !*quiet && time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			done := counts.Accepted + counts.Duplicates + counts.Rejected
			fmt.Fprintf(env.stderr, "simulate: %d/%d events appended (%.0f/s)\n", done, cfg.Events, float64(done)/time.Since(began).Seconds())
		}
		return err
	}
	stats, err := simulate.Stream(cfg, func(e schema.Event) error {
		batch = append(batch, e)
		if len(batch) >= 500 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return errorf(env, exitRuntime, "simulate: %v", err)
	}
	fillSimulateSummary(&sum, stats, began)
	cc := appendCapacity(meter, counts.Accepted, n)
	sum.ConsumedCapacity = &cc
	if err := writeJSON(env.stdout, sum); err != nil {
		return errorf(env, exitRuntime, "simulate: %v", err)
	}
	if !*quiet {
		printAppendCapacity(env.stderr, "simulate", cc)
	}
	if counts.Rejected > 0 {
		return errorf(env, exitFailed, "simulate: %d generated events were rejected (a generator bug)", counts.Rejected)
	}
	return exitOK
}

func fillSimulateSummary(sum *simulateSummary, st simulate.Stats, began time.Time) {
	sum.Generated, sum.Redeliveries, sum.OutOfOrder, sum.PerDomain = st.Events, st.Redeliveries, st.OutOfOrder, st.PerDomain
	sum.Seconds = time.Since(began).Seconds()
	if sum.Seconds > 0 {
		sum.EventsPerSec = float64(st.Events) / sum.Seconds
	}
}

func simulateToFile(ctx context.Context, env *cliEnv, cfg simulate.Config, out string, native bool, began time.Time) int {
	var w io.Writer = env.stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return errorf(env, exitUsage, "simulate: %v", err)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	stats, err := simulate.Stream(cfg, func(e schema.Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if native && strings.HasPrefix(e.Type, schema.WorkflowJobTypePrefix) {
			d, err := ingest.ToGitHubDelivery(e)
			if err != nil {
				return err
			}
			return enc.Encode(d)
		}
		return enc.Encode(e)
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return errorf(env, exitRuntime, "simulate: %v", err)
	}
	if out != "-" {
		sum := simulateSummary{Out: out}
		fillSimulateSummary(&sum, stats, began)
		if err := writeJSON(env.stdout, sum); err != nil {
			return errorf(env, exitRuntime, "simulate: %v", err)
		}
	}
	return exitOK
}

// appendCapacity is what a meter of appends to n's event table recorded,
// per accepted event, keyed by logical table name.
func appendCapacity(m *capacity.Meter, accepted int, n schema.Naming) capacity.Snapshot {
	return m.Snapshot().ForEvents(int64(accepted)).TrimTablePrefix(n.Table(""))
}

// printAppendCapacity prints what appending cost, for people.
func printAppendCapacity(w io.Writer, what string, s capacity.Snapshot) {
	var b strings.Builder
	writeCapacity(&b, what+": ", "event", s, s.PerEvent)
	fmt.Fprintf(&b, "%s: prices: %s\n", what, capacity.PriceNote)
	_, _ = io.WriteString(w, b.String())
}
