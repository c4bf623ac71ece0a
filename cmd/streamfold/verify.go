package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/rebuild"
)

func init() {
	register(command{name: "verify", summary: "recompute metrics rows and run summaries from the archive and list every difference", run: runVerify})
}

const verifyHelp = `Usage: streamfold verify [--from-archive s3://BUCKET/PREFIX] [flags]

Recomputes, from the archive, the rows the projector maintains by counting
and compares them with the live tables, row by row and attribute by
attribute:

  workflow-metrics  sf/ldf daily metrics rows (workflows table, seed 001)
  message-counts    per-stage daily message counts (metrics table, seed 004)
  run-summaries     workflow run summaries (workflow-runs table, seed 003)

It lists every row missing on either side and every attribute that differs.
Counters must be equal exactly (an absent counter counts as 0); the derived
averages may differ by their rounding (avgDurationMs 1 ms,
avgCostPerExecution $0.000001).

The archive is folded in memory (about the size of its events). The live
rows are read with a Query of the workflows table's GSI1 (its metrics rows
only) and consistent Scans of the metrics and workflow-runs tables: an
operator's batch job, not a dashboard query. Rows written from events the
archiver has not archived yet show up as differences: verify once the
archiver has caught up. To repair, rebuild into fresh tables
("streamfold rebuild --into fresh").

The default archive is s3://PREFIX-STAGE-archive/archive.

Examples:
  streamfold verify
  streamfold verify --stage prod --from-archive s3://streamfold-prod-archive/archive --json

Exit status: 0 no difference; 1 differences (each listed); 2 usage; 3 the
archive or a table could not be read.

Flags:
`

// verifyOutput is what verify --json prints.
type verifyOutput struct {
	Archive string `json:"archive"`
	Prefix  string `json:"prefix"`
	Stage   string `json:"stage"`
	OK      bool   `json:"ok"`
	rebuild.Report
}

func runVerify(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	from := fs.String("from-archive", "", "the archive, s3://BUCKET/PREFIX (default s3://PREFIX-STAGE-archive/archive)")
	only := fs.String("only", "", "compare only these row kinds, comma-separated: workflow-metrics, message-counts, run-summaries")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	quiet := fs.Bool("quiet", false, "no progress on standard error")
	var vopts rebuild.VerifyOptions
	foldFlags(fs, &vopts.Options)
	fs.Usage = func() { fmt.Fprint(env.stderr, verifyHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "verify: unexpected argument %q", fs.Arg(0))
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "verify: %v", err)
	}
	if *only != "" {
		vopts.Kinds = strings.Split(*only, ",")
	}
	// Check everything that is the caller's fault before touching a service.
	if err := checkFoldFlags(vopts.Options); err != nil {
		return errorf(env, exitUsage, "verify: %v", err)
	}
	vopts.SetDefaults()
	if err := vopts.Validate(); err != nil {
		return errorf(env, exitUsage, "verify: %v", err)
	}
	if *from != "" {
		if _, _, err := archiver.ParseURI(*from); err != nil {
			return errorf(env, exitUsage, "verify: --from-archive: %v", err)
		}
	}
	c, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "verify: %v", err)
	}
	arch, err := g.openArchive(c, n, *from)
	if err != nil {
		return errorf(env, exitUsage, "verify: --from-archive: %v", err)
	}
	defer arch.Close()
	live, err := rebuild.NewDynamoLive(c.DynamoDB, n)
	if err != nil {
		return errorf(env, exitUsage, "verify: %v", err)
	}
	flush := func() {}
	if !*quiet {
		vopts.Progress, flush = foldProgress(env.stderr, "verify")
	}
	rep, err := rebuild.Verify(ctx, arch, live, vopts)
	flush()
	if err != nil {
		return errorf(env, exitRuntime, "verify: %v", err)
	}
	if rep.Archive.Events == 0 {
		fmt.Fprintf(env.stderr, "verify: the archive %s holds no event (wrong --from-archive?)\n", arch.URI())
	}
	if rep.Archive.Invalid > 0 {
		fmt.Fprintf(env.stderr, "verify: %d archived events could not be projected, e.g. %s\n", rep.Archive.Invalid, rep.Archive.InvalidSamples[0])
	}
	code := exitOK
	if !rep.OK() {
		code = exitFailed
	}
	if *asJSON {
		if err := writeJSON(env.stdout, verifyOutput{Archive: arch.URI(), Prefix: n.Prefix, Stage: n.Stage, OK: rep.OK(), Report: rep}); err != nil {
			return errorf(env, exitRuntime, "verify: %v", err)
		}
		return code
	}
	var rows []string
	for _, r := range rep.Rows {
		rows = append(rows, fmt.Sprintf("%s %d/%d", r.Kind, r.Archive, r.Projection))
	}
	fmt.Fprintf(env.stdout, "verified %s-%s-* against %s (%d archived events); rows archive/projection: %s\n",
		n.Prefix, n.Stage, arch.URI(), rep.Archive.Events, strings.Join(rows, ", "))
	if rep.ExpiredLive > 0 || rep.Archive.Expired > 0 {
		fmt.Fprintf(env.stdout, "left out as expired (past their retention): %d live rows, %d items of the archive's fold\n", rep.ExpiredLive, rep.Archive.Expired)
	}
	if rep.OK() {
		fmt.Fprintln(env.stdout, "no difference")
		return code
	}
	fmt.Fprintf(env.stdout, "%d differences:\n", len(rep.Differences))
	for _, d := range rep.Differences {
		fmt.Fprintf(env.stdout, "  %s\n", d)
	}
	return code
}
