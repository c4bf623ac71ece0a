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

Generates a deterministic workload (the same --seed, --start and flags give
the same events):
GitHub job lifecycles with redelivered and out-of-order webhooks, spot
interruptions and reruns; Step Functions agent executions with failures and
timeouts; sf and ldf album workflows with costs and validation tasks; rez_agent
message transitions with failures and retries. Events come in arrival order,
redeliveries included.

--order time (the default) is a busy production stream: each day holds one
slice of a steady stream, around 13:00 UTC, in which events arrive at --rate
events per second (default 100), so the events of many aggregates interleave:
thousands of events separate a job's webhooks, and a batch of 100 records
holds about 82 distinct subjects. The days share --events by activity
(weekends less), so a day's slice lasts its share divided by the rate (10,000
events in a day: 100 seconds); it opens on the aggregates a steady stream has
in flight and ends with some in flight, so lifecycles are partial at both
ends (give each day an hour or more of traffic, e.g. --rate 5, for mostly
complete ones). --order subject is the first generator's thin order, byte for
byte: aggregates spread over the whole window, each one's events mostly next
to each other (a batch of 100 records holds about 29 subjects).

--github-payloads full sends workflow_job bodies the size and shape GitHub
sends (repository, organization, sender and installation objects with all
their URLs: 7-11 KB); the default, trimmed, keeps the fields streamfold reads
and a few others (1-2.6 KB). Both project the same; measure what storing or
archiving events costs with full.

The summary's "shape" says what workload it was: "sameSubjectPairs" (and
"sameSubjectShare"), the consecutive events that share a subject;
"distinctSubjectsPerWindow", the mean number of distinct subjects per batch
of --shape-window records; "payloadBytes", the mean data size per event type.

Without --out the events are appended to the event table through the same
path as emit, and a JSON summary is printed, with what the appends cost:
"consumedCapacity" holds the capacity units DynamoDB reported for them and
"perEvent" the units per accepted event and their on-demand price per
million events (see "streamfold run -h" and docs/cost.md). With --out (a
file, or - for standard output) they are written as NDJSON that emit
accepts.

Examples:
  streamfold simulate --seed 7 --events 20000 --days 3
  streamfold simulate --events 5000 --github-payloads full --out /dev/null   # just the summary and shape
  streamfold simulate --events 100000 --rate 20 --order time               # 83 minutes of traffic
  streamfold simulate --events 500 --out - --native | streamfold emit -

Flags:
`

// appendCounts is what the event table made of the generated events.
type appendCounts struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	Conflicts  int `json:"conflicts"`
}

type simulateSummary struct {
	Generated    int                   `json:"generated"`
	Redeliveries int                   `json:"redeliveries"`
	OutOfOrder   int                   `json:"outOfOrder"`
	PerDomain    map[schema.Domain]int `json:"perDomain"`
	// Order, Rate and GitHubPayloads are the workload's configuration and
	// Shape what it looked like to a consumer of its stream.
	Order          simulate.Order    `json:"order"`
	Rate           int               `json:"rate,omitempty"`
	GitHubPayloads simulate.Payloads `json:"githubPayloads"`
	Shape          simulate.Shape    `json:"shape"`
	Appended       *appendCounts     `json:"appended,omitempty"`
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
	order := fs.String("order", string(simulate.OrderTime), `"time": a steady stream at --rate, aggregates interleaved; "subject": the old thin order`)
	rate := fs.Int("rate", simulate.DefaultRate, "with --order time: events per second of simulated time in each day's slice")
	payloads := fs.String("github-payloads", string(simulate.PayloadsTrimmed), `workflow_job bodies: "trimmed" or "full" (GitHub's size, 7-11 KB)`)
	window := fs.Int("shape-window", simulate.DefaultShapeWindow, "batch size, in records, of the summary's shape")
	skew := futureSkewFlag(fs, env)
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
		day = env.clock().Truncate(24*time.Hour).AddDate(0, 0, -max(*days, 1))
	} else if day, err = time.Parse("2006-01-02", *start); err != nil {
		return errorf(env, exitUsage, "simulate: --start: want YYYY-MM-DD, got %q", *start)
	}
	cfg := simulate.Config{Seed: *seed, Events: *events, Start: day, Days: *days, Order: simulate.Order(*order), Rate: *rate,
		GitHubPayloads: simulate.Payloads(*payloads)}
	if cfg.Order == simulate.OrderSubject {
		rateSet := false
		fs.Visit(func(f *flag.Flag) { rateSet = rateSet || f.Name == "rate" })
		if rateSet {
			return errorf(env, exitUsage, "simulate: --rate: applies to --order time only")
		}
		cfg.Rate = 0
	} else if *rate < 1 || *rate > simulate.MaxRate {
		return errorf(env, exitUsage, "simulate: --rate: must be between 1 and %d", simulate.MaxRate)
	}
	if *window < 1 {
		return errorf(env, exitUsage, "simulate: --shape-window: must be at least 1")
	}
	maxSkew, err := skew()
	if err != nil {
		return errorf(env, exitUsage, "simulate: %v", err)
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return errorf(env, exitUsage, "%v", err)
	}
	began := time.Now()
	shape := simulate.NewShapeMeter(*window)
	if *out != "" {
		return simulateToFile(ctx, env, cfg, shape, *out, *native, began)
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
	app, err := ingest.NewAppender(clients.MeteredDynamoDB(meter), ingest.AppenderConfig{Table: n.Table(schema.TableEvents), MaxFutureSkew: maxSkew})
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
		counts.Conflicts += res.Count(ingest.Conflict)
		batch = batch[:0]
		if !*quiet && time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			done := counts.Accepted + counts.Duplicates + counts.Rejected
			fmt.Fprintf(env.stderr, "simulate: %d/%d events appended (%.0f/s)\n", done, cfg.Events, float64(done)/time.Since(began).Seconds())
		}
		return err
	}
	stats, err := simulate.Stream(cfg, func(e schema.Event) error {
		shape.Add(&e)
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
	fillSimulateSummary(&sum, cfg, stats, shape, began)
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

func fillSimulateSummary(sum *simulateSummary, cfg simulate.Config, st simulate.Stats, shape *simulate.ShapeMeter, began time.Time) {
	sum.Generated, sum.Redeliveries, sum.OutOfOrder, sum.PerDomain = st.Events, st.Redeliveries, st.OutOfOrder, st.PerDomain
	sum.Order, sum.Rate, sum.GitHubPayloads, sum.Shape = cfg.Order, cfg.Rate, cfg.GitHubPayloads, shape.Shape()
	sum.Seconds = time.Since(began).Seconds()
	if sum.Seconds > 0 {
		sum.EventsPerSec = float64(st.Events) / sum.Seconds
	}
}

func simulateToFile(ctx context.Context, env *cliEnv, cfg simulate.Config, shape *simulate.ShapeMeter, out string, native bool, began time.Time) int {
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
		shape.Add(&e)
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
		fillSimulateSummary(&sum, cfg, stats, shape, began)
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
	s.WriteText(&b, what+": ", "event", s.PerEvent)
	fmt.Fprintf(&b, "%s: prices: %s\n", what, capacity.PriceNote)
	_, _ = io.WriteString(w, b.String())
}
