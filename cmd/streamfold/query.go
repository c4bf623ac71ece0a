package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
)

func init() {
	register(command{name: "query", summary: "read the projections as dashboards do: every access pattern, key and index queries only", run: runQuery})
}

const queryHelp = `Usage: streamfold query PATTERN [flags] [ARG]

Answers the seeds' access patterns from the projection tables (and, for a
job's timeline and duplicate webhooks, from the event table) with GetItem
and Query on keys and indexes, never a scan. Lists come newest first, one
page at a time; the footer says how to ask for the next page.

Patterns:
  executions     --agent A | --status S [--from T] [--to T]   agent executions (seed 000/002)
                 [--from T] [--to T]                          every agent's, newest first
  execution      ARN                                          one execution
  workflow       ID                                           an sf/ldf execution with its albums (seed 001)
  running        [--workflow-type sf|ldf]                     running sf/ldf executions
  tasks          [--workflow-type sf|ldf]                     pending human validation tasks
  metrics        --date D --workflow-type W                   one daily metrics row
                 --workflow-type W [--from D] [--to D]        a workflow type's daily rows
  compare        --date D                                     sf vs ldf metrics of a day, with ratios
  job            --installation I --job J                     one GitHub job (seed 003)
  jobs           --installation I --status S [--stuck-hours N]
                 --installation I --repo R [--since T]        a repository's jobs, success rate, avg duration
  run            --installation I --run R [--attempt A]       a run's jobs and whether it is complete
  timeline       --installation I --job J                     a job's events with the fields each changed
  duplicates     --installation I --job J                     webhooks a job received more than once
  message        ID                                           one rez_agent message (seed 004)
  messages       --stage S | --status S | --type T [--from T] [--to T]
  message-stats  [--stage S] [--hours 24] [--to T]            counts by status and success rate

In messages and message-stats, --stage is the messages' stage; the stage of
the tables (the global --stage, env STREAMFOLD_STAGE) is --table-stage there.

Times (--from, --to, --since, --now) are RFC 3339 (2030-01-15T00:00:00Z);
dates (--date, and --from/--to of metrics) are YYYY-MM-DD. --now sets the
clock of relative windows (--stuck-hours, --hours), default the real time.

Paging: --limit N (default 50, at most 200) and --cursor C, where C is the
"next" of the previous page (with the same other flags). Cursors are signed
with the cursor key: --cursor-key or STREAMFOLD_CURSOR_KEY (16 bytes or
more). Against a local endpoint (127.0.0.1, localhost) the key defaults to a
fixed development key, so cursors work across invocations; against AWS with
no key a one-off random key is used, and its cursors only work within the
same invocation (set the key to page from the command line).

Output is a table; --json prints the result as the HTTP API returns it.

Examples:
  streamfold query executions --agent my-agent --from 2030-01-15T00:00:00Z --to 2030-01-15T23:59:59Z
  streamfold query execution arn:aws:states:us-west-2:123456789012:execution:my-agent-prod:abc123
  streamfold query jobs --installation 12345 --status in_progress --stuck-hours 6
  streamfold query timeline --installation 12345 --job 67890
  streamfold query messages --stage dev --status completed --json
  streamfold query message-stats --stage dev
  streamfold query compare --date 2030-01-15

Exit status: 0 ok; 1 not found; 2 usage error, bad parameter or bad cursor;
3 DynamoDB could not be reached or failed.

Flags:
`

// devCursorKey signs cursors against local endpoints when no key is given.
// It is public (it is in the source): never use it in front of real data.
const devCursorKey = "streamfold-local-development-cursor-key"

// queryOpts are the flags every pattern shares.
type queryOpts struct {
	g         globals
	asJSON    bool
	limit     int
	cursor    string
	cursorKey string
	now       string
}

func runQuery(ctx context.Context, env *cliEnv, args []string) int {
	pats := query.Patterns()
	names := make([]string, len(pats))
	for i, p := range pats {
		names[i] = p.Name
	}
	subName, code, ok := subcommand(env, "query", args, queryHelp, names...)
	if !ok {
		return code
	}
	pat, _ := query.PatternByName(subName)
	fs := flag.NewFlagSet("query "+subName, flag.ContinueOnError)
	var o queryOpts
	if _, ok := pat.Param("stage"); ok {
		// The pattern's --stage is a message's stage, so the stage naming
		// the tables (the global --stage) is --table-stage instead.
		tmp := flag.NewFlagSet("", flag.ContinueOnError)
		o.g.register(tmp, env)
		tmp.VisitAll(func(f *flag.Flag) {
			name := f.Name
			if name == "stage" {
				name = "table-stage"
			}
			fs.Var(f.Value, name, f.Usage)
		})
	} else {
		o.g.register(fs, env)
	}
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (as the HTTP API answers)")
	if pat.Paged {
		fs.IntVar(&o.limit, "limit", 0, "page size (default 50, at most 200)")
		fs.StringVar(&o.cursor, "cursor", "", "continue after the page whose \"next\" this is")
	}
	fs.StringVar(&o.cursorKey, "cursor-key", env.getenv("STREAMFOLD_CURSOR_KEY"), "key signing cursors, 16 bytes or more (env STREAMFOLD_CURSOR_KEY; local endpoints default to a fixed development key)")
	fs.StringVar(&o.now, "now", "", "the clock of relative windows, RFC 3339 (default: now)")
	qRegister(fs, pat.Params)
	fs.Usage = func() { fmt.Fprint(env.stderr, queryHelp); fs.PrintDefaults() }
	// Flags may come before or after the positional argument.
	var positional []string
	for rest := args[1:]; ; {
		if code, ok := parse(fs, env, rest); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	in := &qInput{fs: fs, pat: pat, set: map[string]bool{}, page: query.PageRequest{Limit: o.limit, Cursor: o.cursor}}
	fs.Visit(func(f *flag.Flag) { in.set[f.Name] = true })
	switch {
	case pat.Arg == "" && len(positional) > 0:
		return errorf(env, exitUsage, "query %s: unexpected argument %q", subName, positional[0])
	case pat.Arg != "" && len(positional) != 1:
		return errorf(env, exitUsage, "query %s: want exactly one %s", subName, strings.ToUpper(pat.Arg))
	case pat.Arg != "":
		in.arg = positional[0]
	}
	in.now = env.clock()
	if o.now != "" {
		t, err := query.ParseTime("now", o.now)
		if err != nil {
			return errorf(env, exitUsage, "query %s: --%v", subName, strings.TrimPrefix(err.Error(), "query: "))
		}
		in.now = t
	}
	n, err := o.g.naming()
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	key, oneOff, err := qCursorKey(o.cursorKey, o.g.DynamoDBEndpoint)
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	if oneOff && o.cursor != "" {
		return errorf(env, exitUsage, "query %s: --cursor needs the key that signed it: set --cursor-key or STREAMFOLD_CURSOR_KEY", subName)
	}
	clients, err := o.g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "query: %v", err)
	}
	shards, err := o.g.gsiShards()
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	qc, err := query.New(clients.DynamoDB, n, query.Config{CursorKey: key, GSIShards: shards, JobFold: jobFold})
	if err != nil {
		return errorf(env, exitUsage, "query: %v", err)
	}
	res, err := pat.Run(ctx, qc, in)
	if err != nil {
		return qError(env, pat, err)
	}
	if o.asJSON {
		if err := writeJSON(env.stdout, res); err != nil {
			return errorf(env, exitRuntime, "query: %v", err)
		}
	} else {
		queryRenders[subName](env.stdout, res, in)
	}
	if next := qNextOf(res); next != "" {
		if !o.asJSON {
			fmt.Fprintf(env.stdout, "\nmore: add --cursor %s\n", next)
		}
		if oneOff {
			fmt.Fprintln(env.stderr, "streamfold: query: the next cursor is signed with a one-off key and is valid in this invocation only; set STREAMFOLD_CURSOR_KEY to page from the command line")
		}
	}
	return exitOK
}

// qRegister declares a pattern's parameters as flags of their kind.
func qRegister(fs *flag.FlagSet, params []query.Param) {
	for _, p := range params {
		switch p.Kind {
		case query.KindInt:
			n, _ := strconv.ParseInt(p.Default, 10, 64)
			fs.Int64(p.Flag, n, p.Doc)
		case query.KindFloat:
			f, _ := strconv.ParseFloat(p.Default, 64)
			fs.Float64(p.Flag, f, p.Doc)
		default:
			fs.String(p.Flag, p.Default, p.Doc)
		}
	}
}

// qInput is the command line as a pattern's query.Input: the positional
// argument and the flags, a flag counting as given when it was set.
type qInput struct {
	fs   *flag.FlagSet
	pat  query.Pattern
	set  map[string]bool
	arg  string
	now  time.Time
	page query.PageRequest
}

func (in *qInput) Value(name string) (string, bool) {
	if name == in.pat.Arg {
		return in.arg, true
	}
	p, ok := in.pat.Param(name)
	if !ok {
		return "", false
	}
	return in.fs.Lookup(p.Flag).Value.String(), in.set[p.Flag]
}

func (in *qInput) Spell(name string) string { return qSpell(in.pat, name) }

func (in *qInput) Page() (query.PageRequest, error) { return in.page, nil }

func (in *qInput) Now() time.Time { return in.now }

// qSpell names a parameter as the command line does: --flag, or the
// positional argument in capitals.
func qSpell(pat query.Pattern, name string) string {
	if name == pat.Arg {
		return strings.ToUpper(name)
	}
	if p, ok := pat.Param(name); ok {
		return "--" + p.Flag
	}
	return "--" + qFlagName(name)
}

// qError maps a query error to its message and exit code.
func qError(env *cliEnv, pat query.Pattern, err error) int {
	sub := pat.Name
	var pe *query.ParamError
	switch {
	case errors.As(err, &pe):
		return errorf(env, exitUsage, "query %s: %s: %s", sub, qSpell(pat, pe.Param), pe.Reason)
	case errors.Is(err, query.ErrBadCursor):
		return errorf(env, exitUsage, "query %s: --cursor: not valid for this query (modified, truncated, signed with another key or issued for other flags)", sub)
	case errors.Is(err, query.ErrNotFound):
		return errorf(env, exitFailed, "query %s: %s", sub, strings.TrimPrefix(err.Error(), "query: "))
	}
	return errorf(env, exitRuntime, "query %s: %v", sub, err)
}

// qFlagName turns an API parameter name into the CLI flag (workflowType ->
// workflow-type).
func qFlagName(param string) string {
	var b strings.Builder
	for _, r := range param {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// qCursorKey picks the cursor key: the given one; else, for a local
// endpoint, the development key; else a random one-off key (oneOff).
func qCursorKey(given, endpoint string) (key []byte, oneOff bool, err error) {
	switch {
	case given != "":
		if len(given) < query.MinCursorKeyBytes {
			return nil, false, fmt.Errorf("--cursor-key: must be at least %d bytes", query.MinCursorKeyBytes)
		}
		return []byte(given), false, nil
	case qIsLocal(endpoint):
		return []byte(devCursorKey), false, nil
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	return key, true, nil
}

func qIsLocal(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func qNextOf(res any) string {
	switch v := res.(type) {
	case query.Page:
		return v.Next
	case query.RepoJobsPage:
		return v.Next
	}
	return ""
}

// jobFold is the projector's job fold, for query's job timeline.
func jobFold() query.JobFold { return projector.NewJobFold() }
