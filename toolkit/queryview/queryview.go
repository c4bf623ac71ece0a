// Package queryview provides the read workflow of "streamfold query": answer
// one access pattern of query.Patterns from the projection tables (key and
// index queries only, never a scan) and render its result as a table, or
// as JSON the way the HTTP API answers.
//
// Args is a query.Input from a command line (flags and a positional
// argument). Lists come one page at a time; Result.Next is the signed
// cursor of the next page. Run is safe for concurrent use.
package queryview

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// DevCursorKey signs cursors against local endpoints when no key is given.
// It is public (it is in the source): never use it in front of real data.
const DevCursorKey = "streamfold-local-development-cursor-key"

// Options are one query's settings.
type Options struct {
	// Pattern is the access pattern (query.PatternByName).
	Pattern query.Pattern
	// Input is its parameters, page and clock (an *Args from a command
	// line).
	Input query.Input
	// CursorKey signs cursors, at least query.MinCursorKeyBytes; empty is
	// DevCursorKey when Local, else a random one-off key whose cursors are
	// valid in this process only.
	CursorKey string
	// Local says the tables are a local DynamoDB.
	Local bool
	// GSIShards is the deployment's write sharding (0: off).
	GSIShards int
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	switch {
	case o.Pattern.Run == nil:
		return toolkit.Invalid("query", "Pattern", nil, "has no Run (see query.PatternByName)")
	case o.Input == nil:
		return toolkit.Invalid("query", "Input", nil, "is nil")
	case o.CursorKey != "" && len(o.CursorKey) < query.MinCursorKeyBytes:
		return toolkit.Invalid("query", "CursorKey", nil, fmt.Sprintf("must be at least %d bytes", query.MinCursorKeyBytes))
	}
	if p, err := o.Input.Page(); err == nil && p.Cursor != "" && o.CursorKey == "" && !o.Local {
		return toolkit.Invalid("query", "CursorKey", nil, "is needed to check a cursor: set the key that signed it")
	}
	return nil
}

// Result is a pattern's answer. Its JSON is the answer's, as the HTTP API
// gives it.
type Result struct {
	// Pattern is the pattern's name and Value its answer.
	Pattern string
	Value   any
	// Next is the cursor of the next page, "" at the end or for a single
	// item.
	Next string
	// OneOffKey says Next is signed with a one-off key: valid in this
	// process only.
	OneOffKey bool
	in        query.Input
}

// MarshalJSON is Value's JSON.
func (r *Result) MarshalJSON() ([]byte, error) { return json.Marshal(r.Value) }

// WriteText prints the answer as a table, and how to ask for the next page.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	renders[r.Pattern](&b, r.Value, r.in)
	if r.Next != "" {
		fmt.Fprintf(&b, "\nmore: add --cursor %s\n", r.Next)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Run answers o.Pattern from n's tables through db. Its errors are an
// invalid Options, the pattern's error as Explain gives it, or a DynamoDB
// failure.
func Run(ctx context.Context, db query.DynamoAPI, n schema.Naming, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	key, oneOff := []byte(o.CursorKey), false
	switch {
	case o.CursorKey != "":
	case o.Local:
		key = []byte(DevCursorKey)
	default:
		key, oneOff = make([]byte, 32), true
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	qc, err := query.New(db, n, query.Config{CursorKey: key, GSIShards: o.GSIShards, JobFold: JobFold})
	if err != nil {
		return nil, toolkit.Invalid("query", "Config", err, "")
	}
	v, err := o.Pattern.Run(ctx, qc, o.Input)
	if err != nil {
		return nil, Explain(err, o.Input)
	}
	r := &Result{Pattern: o.Pattern.Name, Value: v, in: o.Input}
	switch p := v.(type) {
	case query.Page:
		r.Next = p.Next
	case query.RepoJobsPage:
		r.Next = p.Next
	}
	r.OneOffKey = oneOff && r.Next != ""
	return r, nil
}

// Error is a pattern's error as its input's front end shows it: the
// parameter at fault spelled the front end's way (Input.Spell), without the
// query package's prefix. It wraps the pattern's error (a
// *query.ParamError, query.ErrBadCursor or query.ErrNotFound) and, when the
// input is at fault, toolkit.ErrInvalidOptions.
type Error struct {
	Msg     string
	Err     error
	Invalid bool
}

func (e *Error) Error() string { return e.Msg }

// Unwrap reaches Err, and ErrInvalidOptions when Invalid.
func (e *Error) Unwrap() []error {
	if e.Invalid {
		return []error{toolkit.ErrInvalidOptions, e.Err}
	}
	return []error{e.Err}
}

// Explain turns a pattern's error (or query.ParseTime's) into an *Error
// for in; other errors are returned as they are.
func Explain(err error, in query.Input) error {
	var pe *query.ParamError
	switch {
	case errors.As(err, &pe):
		return &Error{Msg: in.Spell(pe.Param) + ": " + pe.Reason, Err: err, Invalid: true}
	case errors.Is(err, query.ErrBadCursor):
		return &Error{Msg: in.Spell("cursor") + ": not valid for this query (modified, truncated, signed with another key or issued for other flags)", Err: err, Invalid: true}
	case errors.Is(err, query.ErrNotFound):
		return &Error{Msg: strings.TrimPrefix(err.Error(), "query: "), Err: err}
	}
	return err
}

// JobFold is the projector's job fold, for the job timeline (query.Config.JobFold).
func JobFold() query.JobFold { return projector.NewJobFold() }

// IsLocal reports whether a DynamoDB endpoint is on this machine
// (localhost or a loopback address).
func IsLocal(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if endpoint == "" || err != nil {
		return false
	}
	if host := u.Hostname(); host != "localhost" {
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return true
}

// Args is a query.Input from a command line: the pattern's positional
// argument and its parameters' flags, spelled --flag and ARG in messages.
type Args struct {
	Pattern query.Pattern
	// Arg is the positional argument's value.
	Arg string
	// Values are the parameters' text by API name, the flag's default
	// when not given; Given says which were given.
	Values map[string]string
	Given  map[string]bool
	// Request is the page asked for; Clock the time of relative windows.
	Request query.PageRequest
	Clock   time.Time
}

// Value is a parameter's text and whether it was given.
func (a *Args) Value(name string) (string, bool) {
	if name == a.Pattern.Arg {
		return a.Arg, true
	}
	v, ok := a.Values[name]
	return v, ok && a.Given[name]
}

// Spell names a parameter as the command line does: --flag, or the
// positional argument in capitals.
func (a *Args) Spell(name string) string {
	if name == a.Pattern.Arg {
		return strings.ToUpper(name)
	}
	if p, ok := a.Pattern.Param(name); ok {
		return "--" + p.Flag
	}
	var b strings.Builder // workflowType -> --workflow-type
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return "--" + b.String()
}

// Page is the page asked for.
func (a *Args) Page() (query.PageRequest, error) { return a.Request, nil }

// Now is the clock of relative windows.
func (a *Args) Now() time.Time { return a.Clock }
