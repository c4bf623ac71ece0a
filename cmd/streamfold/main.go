// Command streamfold runs streamfold locally and operates it: the local
// stack, producers (emit, simulate), the consumers (run, serve), the dead
// letters, the archive, reconcile, rebuild, verify, queries and deploys.
//
// The workflows themselves live in the packages under toolkit/; this
// program parses flags (github.com/alecthomas/kong: one command tree, help
// generated from it, STREAMFOLD_* environment defaults on every flag that
// has one), wires the clients and renders results as text or, with --json,
// JSON.
//
// Run `streamfold --help` for the list of commands and `streamfold CMD
// --help` for one command's flags.
package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/cmdline"
	"github.com/streamfold/streamfold/toolkit"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitFailed  = 1 // the command ran and found a problem (rejected lines, a difference, ...)
	exitUsage   = 2 // bad flags or arguments
	exitRuntime = 3 // a service could not be reached or a write failed
	// exitConflict: emit found events whose id is stored with different
	// content (kept in the dead letters, consumer ingest).
	exitConflict = 4
)

// cli is the command tree, in the order --help lists it: its groups'
// commands, group after group. Each group is a struct and the kong.Group
// that titles it in --help, declared together below.
type cli struct {
	output
	producing `group:"producing"`
	consuming `group:"consuming"`
	reading   `group:"reading"`
	repairing `group:"repairing"`
	operating `group:"operating"`
}

var producingGroup = kong.Group{Key: "producing", Title: "Producing events: the local stack and the producers"}

type producing struct {
	Dev      devCmd      `cmd:"" help:"Start, check or stop the local stack (DynamoDB Local with Streams, MinIO or a local filesystem archive)."`
	Simulate simulateCmd `cmd:"" help:"Generate a deterministic, realistic workload over all four domains."`
	Emit     emitCmd     `cmd:"" help:"Append NDJSON events (envelopes, GitHub deliveries, EventBridge events) to the event table."`
}

var consumingGroup = kong.Group{Key: "consuming", Title: "Consuming the stream: the consumers and the API"}

type consuming struct {
	Run   runCmd   `cmd:"" help:"Consume the event table's stream locally: project it and archive it (Lambda's semantics)."`
	Serve serveCmd `cmd:"" help:"Serve the HTTP JSON API and the dashboard locally."`
}

var readingGroup = kong.Group{Key: "reading", Title: "Reading what was appended and projected"}

type reading struct {
	Query   queryCmd   `cmd:"" help:"Read the projections as dashboards do: every access pattern, key and index queries only."`
	Events  eventsCmd  `cmd:"" help:"Inspect the event table: summary, or the events of one subject."`
	Summary summaryCmd `cmd:"" help:"Summarise what was projected: items per projection, sf vs ldf daily metrics."`
}

var repairingGroup = kong.Group{Key: "repairing", Title: "Repairing: what could not be processed, and proving nothing was lost"}

type repairing struct {
	Deadletter deadletterCmd `cmd:"" help:"List or replay records the projector, archiver or ingest function could not process; redrive failed stream batches."`
	Reconcile  reconcileCmd  `cmd:"" help:"Prove every event of the event table was projected and archived; --heal what was not."`
	Verify     verifyCmd     `cmd:"" help:"Recompute metrics rows and run summaries from the archive and list every difference."`
	Rebuild    rebuildCmd    `cmd:"" help:"Rebuild the projections from the Parquet archive, into fresh tables or in place."`
}

var operatingGroup = kong.Group{Key: "operating", Title: "Operating: the archive and the deployment"}

type operating struct {
	Archive archiveCmd `cmd:"" help:"Inspect, compact and maintain the Iceberg archive; print its table schemas and named queries; migrate an old archive."`
	Deploy  deployCmd  `cmd:"" help:"Plan, apply, destroy or show outputs of streamfold's infrastructure with Terraform."`
}

// output are the flags every command shares: how results are printed.
type output struct {
	JSON  bool `help:"Print the result as JSON on standard output (commands that only print JSON print the same)." sfenv:"STREAMFOLD_JSON"`
	Quiet bool `help:"No progress on standard error." sfenv:"STREAMFOLD_QUIET"`
}

// cliEnv carries the process's streams and environment lookup, so commands
// are testable without touching the real process.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// now is the clock of defaults anchored at the current time (simulate's
	// window, query's --now): time.Now in main, the test clock in tests.
	now func() time.Time
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now}, os.Args[1:])
	stop()
	os.Exit(code)
}

//go:embed help
var helpFS embed.FS

// longHelp is the prose of a command's --help, help/NAME.txt (the flags
// are generated from the command's struct).
func longHelp(name string) string {
	b, err := helpFS.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a missing help file is a build defect; TestEveryCommandHasHelp finds it
	}
	return strings.TrimRight(string(b), "\n")
}

// helpWidth is the widest the help is wrapped (narrower on a narrower
// terminal or $COLUMNS).
const helpWidth = 100

// kongExit is how kong's exit (after --help) unwinds to run.
type kongExit int

// newParser builds the command tree for env.
func newParser(env *cliEnv, c *cli) (*kong.Kong, error) {
	c.Query = newQueryCmd()
	opts := []kong.Option{
		kong.Name("streamfold"),
		kong.Description(longHelp("streamfold")),
		kong.Writers(env.stdout, env.stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.Resolvers(cmdline.EnvResolver(env.getenv)),
		kong.ValueFormatter(cmdline.HelpValue),
		kong.ExplicitGroups([]kong.Group{producingGroup, consumingGroup, readingGroup, repairingGroup, operatingGroup}),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true, WrapUpperBound: helpWidth}),
		kong.Bind(env),
		kong.BindTo(context.Background(), (*context.Context)(nil)),
	}
	parser, err := kong.New(c, opts...)
	if err != nil {
		return nil, err
	}
	// A command's subcommands are listed under "Commands:", not under its group's title.
	sub := &kong.Group{Key: "commands", Title: "Commands:"}
	for todo := append([]*kong.Node(nil), parser.Model.Children...); len(todo) > 0; todo = todo[1:] {
		for _, child := range todo[0].Children {
			child.Group, todo = sub, append(todo, child)
		}
	}
	return parser, nil
}

func run(ctx context.Context, env *cliEnv, args []string) (code int) {
	if env.getenv == nil {
		env.getenv = func(string) string { return "" }
	}
	if len(args) > 0 && args[0] == "help" { // "streamfold help [CMD...]" is "streamfold [CMD...] --help"
		args = append(append([]string{}, args[1:]...), "--help")
	}
	noArgs := len(args) == 0
	if noArgs { // the help, as a usage error
		args = []string{"--help"}
	}
	var c cli
	parser, err := newParser(env, &c)
	if err != nil {
		panic(err) // the command tree is static: a test finds a broken one
	}
	defer func() {
		if r := recover(); r != nil {
			k, ok := r.(kongExit)
			if !ok {
				panic(r)
			}
			code = int(k)
			if noArgs {
				code = exitUsage
			}
		}
	}()
	kctx, err := parser.Parse(args)
	if err != nil {
		return usageError(env, err)
	}
	kctx.BindTo(ctx, (*context.Context)(nil))
	kctx.Bind(&c.output)
	return exitCodeOf(env, cmdline.WithFlagNames(kctx, kctx.Run(), exitUsage, flagAliases))
}

// usageError prints a parse error, naming the command and where its help
// is, and returns exitUsage.
func usageError(env *cliEnv, err error) int {
	path := "streamfold"
	var perr *kong.ParseError
	if errors.As(err, &perr) && perr.Context != nil {
		if n := perr.Context.Selected(); n != nil {
			path = n.FullPath()
		}
	}
	msg := err.Error()
	if arg, ok := strings.CutPrefix(msg, "unexpected argument "); ok && path == "streamfold" {
		msg = fmt.Sprintf("unknown command %q", arg)
	} else if ok && perr.Context.Selected() != nil && len(perr.Context.Selected().Children) > 0 {
		msg = fmt.Sprintf("unknown subcommand %q", arg)
	}
	fmt.Fprintf(env.stderr, "%s: %s\nrun '%s --help' for its flags\n", path, msg, path)
	return exitUsage
}

// fail is a command error with an exit code (cmdline.Fail).
func fail(code int, format string, args ...any) error { return cmdline.Fail(code, format, args...) }

// exitStatus is an error carrying only an exit code: the command has
// already said what it found.
type exitStatus = cmdline.ExitStatus

// exitCodeOf prints err (with the tables hint when a table is missing) and
// returns its exit code; nil is exitOK, an error without a code exitRuntime.
func exitCodeOf(env *cliEnv, err error) int {
	code, silent := cmdline.CodeOf(err, exitRuntime)
	if silent {
		return code
	}
	fmt.Fprintf(env.stderr, "streamfold: %v\n", err)
	var nf *awsclient.TableNotFoundError
	if errors.As(err, &nf) {
		fmt.Fprintln(env.stderr, tableHint)
	}
	return code
}

// render prints a command's result: JSON with --json or when the command
// has no text form (text is nil), else text.
func (env *cliEnv) render(out *output, v any, text func(io.Writer) error) error {
	if out.JSON || text == nil {
		if err := writeJSON(env.stdout, v); err != nil {
			return fail(exitRuntime, "%v", err)
		}
		return nil
	}
	if err := text(env.stdout); err != nil {
		return fail(exitRuntime, "%v", err)
	}
	return nil
}

// progress is where a command prints progress: standard error, or nowhere
// with --quiet.
func (env *cliEnv) progress(out *output) io.Writer {
	if out.Quiet {
		return io.Discard
	}
	return env.stderr
}

// connect checks the naming (exitUsage) and opens the clients (exitRuntime).
func connect(ctx context.Context, g *globals, cmd string) (*awsclient.Clients, error) {
	if _, err := g.naming(); err != nil {
		return nil, fail(exitUsage, "%s: %w", cmd, err)
	}
	c, err := g.clients(ctx)
	if err != nil {
		return nil, fail(exitRuntime, "%s: %w", cmd, err)
	}
	return c, nil
}

// warnings is the handlers' log: warnings and errors on standard error.
func warnings(env *cliEnv) *slog.Logger {
	return slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// workflowErr is a workflow's error as cmd's: exitUsage for invalid
// options (toolkit.ErrInvalidOptions), else code; the message starts with
// cmd once.
func workflowErr(cmd string, code int, err error) error {
	if errors.Is(err, toolkit.ErrInvalidOptions) {
		code = exitUsage
	}
	var oe *toolkit.OptionsError
	if errors.As(err, &oe) { // "replay: Options.X" of "deadletter replay" is "deadletter replay: Options.X"
		return &cmdline.Error{Code: code, Err: cmdline.Reword(err, cmd+": "+strings.TrimPrefix(err.Error(), oe.Workflow+": "))}
	}
	word, _, _ := strings.Cut(cmd, " ")
	if msg := err.Error(); strings.HasPrefix(msg, cmd+": ") || strings.HasPrefix(msg, word+": ") {
		return &cmdline.Error{Code: code, Err: err}
	}
	return fail(code, "%s: %w", cmd, err)
}

// failed is workflowErr with exitRuntime for what is not invalid options.
func failed(cmd string, err error) error { return workflowErr(cmd, exitRuntime, err) }

// exitUsageOr is exitUsage for a workflow's invalid options
// (toolkit.ErrInvalidOptions), exitRuntime otherwise.
func exitUsageOr(err error) int {
	if errors.Is(err, toolkit.ErrInvalidOptions) {
		return exitUsage
	}
	return exitRuntime
}

// flagAliases are the flags of option fields not named as their flag.
var flagAliases = map[string]string{
	"Archive": "from-archive", "Kinds": "only", "ChunkEvents": "chunk", "BufferEvents": "buffer",
	"RetentionDays": "retention", "Vars": "var", "Config.Rate": "rate", "Config.Order": "order",
	"Config.GitHubPayloads": "github-payloads", "Config.Days": "days", "Config.Events": "events",
	"Target": "target-prefix/--target-stage", "TargetPrefix, TargetStage, Force": "target-prefix, --target-stage and --force",
}
