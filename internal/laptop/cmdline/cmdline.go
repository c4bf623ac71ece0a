// Package cmdline provides what a kong command line needs beyond kong
// itself: defaults from environment variables read through an injected
// lookup (so tests replace the environment), help that names each flag's
// variable, errors that carry an exit code, and a workflow's invalid
// options named by the flag that sets them.
//
// A flag names its variable in an `sfenv:"NAME"` tag, not kong's `env`
// tag: kong reads the process environment itself.
package cmdline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/toolkit"
)

// EnvTag is the struct tag naming a flag's environment variable.
const EnvTag = "sfenv"

// EnvResolver gives a flag the value of its variable (looked up with
// getenv; empty is unset) when the command line does not set it. A value
// that does not parse is an error naming the variable.
func EnvResolver(getenv func(string) string) kong.Resolver {
	return kong.ResolverFunc(func(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
		name := f.Tag.Get(EnvTag)
		if name == "" {
			return nil, nil
		}
		v := getenv(name)
		if v == "" {
			return nil, nil
		}
		scratch := reflect.New(f.Target.Type()).Elem() // parse a copy first, to name the variable
		if err := f.Parse(kong.ScanFromTokens(kong.Token{Type: kong.FlagValueToken, Value: v}), scratch); err != nil {
			msg := strings.TrimPrefix(err.Error(), "--"+f.Name+": ")
			return nil, fmt.Errorf("%s=%q (from the environment): %s", name, v, msg)
		}
		return v, nil
	})
}

// HelpValue is a flag's help followed by its environment variable (kong
// shows the default as the flag's placeholder). Use it with
// kong.ValueFormatter.
func HelpValue(v *kong.Value) string {
	name := v.Tag.Get(EnvTag)
	if name == "" {
		return v.Help
	}
	return strings.TrimSuffix(v.Help, ".") + " (env " + name + ")."
}

// Reword is err with another message (the chain below it kept).
func Reword(err error, msg string) error { return &reworded{msg, err} }

type reworded struct {
	msg string
	err error
}

func (r *reworded) Error() string { return r.msg }
func (r *reworded) Unwrap() error { return r.err }

// Error is a command's failure with its exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Fail is an *Error with code and a message in fmt.Errorf's form.
func Fail(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// ExitStatus is an error that only carries an exit code: the command has
// already said what it found.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// CodeOf is err's exit code: 0 for nil, an ExitStatus's or an *Error's
// code, else def. silent reports an ExitStatus (nothing to print).
func CodeOf(err error, def int) (code int, silent bool) {
	if err == nil {
		return 0, true
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st), true
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code, false
	}
	return def, false
}

// WithFlagNames rewrites "Options.FIELD" in the message of a workflow's
// invalid options (a *toolkit.OptionsError) as the flag of the selected
// command that sets the field, "--heartbeat-interval" for
// HeartbeatInterval, or the flag aliases names for it; people give flags,
// not option fields. The result keeps err's exit code (an *Error with
// code when err had none).
func WithFlagNames(kctx *kong.Context, err error, code int, aliases map[string]string) error {
	var oe *toolkit.OptionsError
	if kctx == nil || !errors.As(err, &oe) {
		return err
	}
	name := aliases[oe.Field]
	if name == "" {
		name = Dashed(oe.Field)
	}
	first := name // an alias may name several flags: "target-prefix, --target-stage and --force"
	if i := strings.IndexAny(name, ", /"); i >= 0 {
		first = name[:i]
	}
	for _, f := range kctx.Flags() {
		if f.Name == first {
			c, _ := CodeOf(err, code)
			return &Error{Code: c, Err: Reword(err, strings.Replace(err.Error(), "Options."+oe.Field, "--"+name, 1))}
		}
	}
	return err
}

// Dashed is a Go field name as kong names its flag: HeartbeatInterval is
// heartbeat-interval, SFNTags sfn-tags.
func Dashed(field string) string {
	var b strings.Builder
	rs := []rune(field)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (!unicode.IsUpper(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
