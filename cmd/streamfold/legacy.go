package main

// Helpers of the commands still on the flag package, until each moves to
// the kong command tree (main.go).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) int
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// legacyCmd runs a command still on the flag package with every argument
// after its name.
type legacyCmd struct {
	Args []string                                                  `arg:"" optional:""`
	run  func(ctx context.Context, env *cliEnv, args []string) int `kong:"-"`
}

func (l *legacyCmd) Run(ctx context.Context, env *cliEnv) error {
	if code := l.run(ctx, env, l.Args); code != exitOK {
		return exitStatus(code)
	}
	return nil
}

// legacyCommands adds the commands still on the flag package to the tree.
func legacyCommands() []kong.Option {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var opts []kong.Option
	for _, n := range names {
		c := commands[n]
		opts = append(opts, kong.DynamicCommand(n, c.summary, "", &legacyCmd{run: c.run}, `cmd:"" passthrough:"all"`))
	}
	return opts
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
