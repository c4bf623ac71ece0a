// Command streamfold runs streamfold locally and operates it: the local
// stack, producers (emit, simulate) and inspection of the event log.
//
// Run `streamfold help` for the list of commands and `streamfold CMD -h` for
// one command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailed  = 1 // the command ran and found a problem (rejected lines, a difference, ...)
	exitUsage   = 2 // bad flags or arguments
	exitRuntime = 3 // a service could not be reached or a write failed
	// exitConflict: emit found events whose id is stored with different
	// content (kept in the dead letters, consumer ingest).
	exitConflict = 4
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

// cliEnv carries the process's streams and environment lookup, so commands
// are testable without touching the real process.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// now is the clock of defaults anchored at the current time (simulate's
	// window, query's --now, archive compact's example date); nil is
	// time.Now. Tests set it to the test clock.
	now func() time.Time
}

// clock is env.now, or time.Now when it is unset.
func (env *cliEnv) clock() time.Time {
	if env.now != nil {
		return env.now().UTC()
	}
	return time.Now().UTC()
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, env, []string{"-h"})
			}
		}
		usage(env.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "streamfold: unknown command %q\n\n", args[0])
		usage(env.stderr)
		return exitUsage
	}
	return c.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprint(w, `streamfold turns append-only event logs in DynamoDB into the views people read.

Usage:
  streamfold COMMAND [flags]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Every command takes -h for its flags. Connection flags default from the
environment: STREAMFOLD_DYNAMODB_ENDPOINT, STREAMFOLD_S3_ENDPOINT,
STREAMFOLD_PREFIX (default "streamfold"), STREAMFOLD_STAGE (default "dev");
with no endpoint set the AWS SDK's normal configuration is used.

Exit codes: 0 ok; 1 the command found a problem (e.g. rejected input);
2 usage error; 3 a service could not be reached or a write failed.
`)
}

// parse parses flags and maps -h and bad flags to exit codes; ok=false means
// return code. -h prints the command's help; a bad flag prints what is
// wrong and where the help is, not the whole help.
func parse(fs *flag.FlagSet, env *cliEnv, args []string) (code int, ok bool) {
	fs.SetOutput(env.stderr)
	help := fs.Usage
	fs.Usage = func() {} // the flag package calls it for -h and for errors alike
	defer func() { fs.Usage = help }()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			help()
			return exitOK, false
		}
		fmt.Fprintf(env.stderr, "run 'streamfold %s -h' for its flags\n", fs.Name())
		return exitUsage, false
	}
	return 0, true
}

// subcommand picks the subcommand of a command with subcommands. ok=false
// means return code: help was asked for (0) or the subcommand is missing or
// unknown (2, after saying so and printing help).
func subcommand(env *cliEnv, name string, args []string, help string, allowed ...string) (sub string, code int, ok bool) {
	if len(args) > 0 {
		for _, a := range allowed {
			if args[0] == a {
				return a, 0, true
			}
		}
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprint(env.stderr, commandHelp(name, help))
			return "", exitOK, false
		}
		fmt.Fprintf(env.stderr, "streamfold: %s: unknown subcommand %q\n", name, args[0])
	}
	fmt.Fprint(env.stderr, commandHelp(name, help))
	return "", exitUsage, false
}

// commandHelp is the help of a command with subcommands, printed without
// a subcommand: its flags belong to the subcommands, so the trailing
// "Flags:" heading gives way to where they are listed.
func commandHelp(name, help string) string {
	if body, ok := strings.CutSuffix(help, "Flags:\n"); ok {
		return body + "Each subcommand lists its flags: streamfold " + name + " SUBCOMMAND -h\n"
	}
	return help
}
