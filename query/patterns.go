package query

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// ParamKind is the type of a parameter's value: how the CLI declares its
// flag. Every front end hands the value over as text.
type ParamKind int

// Parameter kinds.
const (
	KindString ParamKind = iota
	KindInt
	KindFloat
)

// Param is one parameter of a pattern: a query or path parameter of the
// HTTP API and a flag of the CLI.
type Param struct {
	// Name is the API's name, the one ParamError.Param uses
	// ("workflowType", "id").
	Name string
	// Flag is the CLI's flag ("workflow-type", "job").
	Flag string
	Kind ParamKind
	// Default is the CLI flag's default, as text ("-1", "24"); "" is the
	// kind's zero value. A flag left at its default counts as not given.
	Default string
	// Doc is the CLI flag's usage line.
	Doc string
}

// Input is what a front end hands a pattern: the parameters' text, how the
// front end spells a parameter in messages, the page and the clock.
type Input interface {
	// Value returns a parameter's text and whether it was given. A
	// parameter not given still has its front end's default text.
	Value(name string) (string, bool)
	// Spell names a parameter as the front end's users write it
	// ("workflowType" in the API, "--workflow-type" in the CLI).
	Spell(name string) string
	// Page returns the page request of a paged pattern, checked by the
	// front end (which knows its own page size limit).
	Page() (PageRequest, error)
	// Now is the clock of relative windows (stuckHours, hours).
	Now() time.Time
}

// Pattern is one access pattern, as both the HTTP API and the CLI offer it.
type Pattern struct {
	// Name is the CLI's pattern name ("message-stats").
	Name string
	// Doc says what the pattern answers, one sentence (the CLI's and
	// docs/api.md's list of patterns).
	Doc string
	// Route is the HTTP route; its {wildcards} are path parameters.
	Route string
	// Arg is the parameter the CLI takes as its positional argument
	// ("arn", "id"), "" for none.
	Arg string
	// ArgDoc says what Arg is, one sentence.
	ArgDoc string
	// Params are the query parameters (API) and flags (CLI), path
	// parameters included; Arg is not among them.
	Params []Param
	// Paged: a list, one page at a time (limit and cursor).
	Paged bool
	// Run validates the input and answers the pattern.
	Run func(ctx context.Context, c *Client, in Input) (any, error)
}

// Param returns the pattern's parameter of that name.
func (p Pattern) Param(name string) (Param, bool) {
	for _, pr := range p.Params {
		if pr.Name == name {
			return pr, true
		}
	}
	return Param{}, false
}

// PatternByName returns the pattern the CLI calls name.
func PatternByName(name string) (Pattern, bool) {
	for _, p := range Patterns() {
		if p.Name == name {
			return p, true
		}
	}
	return Pattern{}, false
}

// Patterns returns every access pattern, in the order the CLI's help lists
// them (a fresh slice).
func Patterns() []Pattern {
	return slices.Clone(patterns)
}

// text returns a parameter's text, "" when not given.
func text(in Input, name string) string {
	if v, given := in.Value(name); given {
		return v
	}
	return ""
}

// timeRange reads the RFC 3339 from and to.
func timeRange(in Input) (TimeRange, error) {
	from, err := ParseTime("from", text(in, "from"))
	if err != nil {
		return TimeRange{}, err
	}
	to, err := ParseTime("to", text(in, "to"))
	return TimeRange{From: from, To: to}, err
}

// dateRange reads the YYYY-MM-DD from and to of a metrics series.
func dateRange(in Input) (TimeRange, error) {
	var r TimeRange
	for _, b := range []struct {
		name string
		dst  *time.Time
	}{{"from", &r.From}, {"to", &r.To}} {
		if v := text(in, b.name); v != "" {
			if _, err := ParseDate(b.name, v); err != nil {
				return TimeRange{}, err
			}
			*b.dst, _ = time.Parse("2006-01-02", v)
		}
	}
	return r, nil
}

// hours reads a window of hours in (0, max]; ok is false when absent.
func hours(in Input, name string, max int) (time.Duration, bool, error) {
	v := text(in, name)
	if v == "" {
		return 0, false, nil
	}
	h, err := strconv.ParseFloat(v, 64)
	if err != nil || h <= 0 || h > float64(max) {
		return 0, false, invalid(name, "must be a number of hours between 0 and %d, got %q", max, v)
	}
	return time.Duration(h * float64(time.Hour)), true, nil
}

// installation reads the required installation id.
func installation(in Input) (int64, error) {
	v := text(in, "installation")
	if v == "" {
		return 0, invalid("installation", "is required")
	}
	return ParseInt("installation", v)
}

// ints reads the installation and further integer parameters.
func ints(in Input, names ...string) ([]int64, error) {
	inst, err := installation(in)
	if err != nil {
		return nil, err
	}
	out := []int64{inst}
	for _, n := range names {
		t, _ := in.Value(n) // the CLI's default when not given
		v, err := ParseInt(n, t)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// pagedRun runs a list pattern once its page is read.
func pagedRun(in Input, run func(PageRequest) (any, error)) (any, error) {
	p, err := in.Page()
	if err != nil {
		return nil, err
	}
	return run(p)
}

// jobKeyRun is the run of the patterns keyed by installation and job id.
func jobKeyRun[T any](get func(c *Client, ctx context.Context, installation, id int64) (T, error)) func(context.Context, *Client, Input) (any, error) {
	return func(ctx context.Context, c *Client, in Input) (any, error) {
		k, err := ints(in, "id")
		if err != nil {
			return nil, err
		}
		return get(c, ctx, k[0], k[1])
	}
}
