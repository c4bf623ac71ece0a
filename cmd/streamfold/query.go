package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/toolkit/queryview"
)

// queryCmd has a subcommand per pattern of query.Patterns (newQueryCmd).
type queryCmd struct {
	Patterns kong.Plugins `embed:""`
}

func (queryCmd) Help() string { return longHelp("query") }

// queryFlags are the flags every pattern has besides its parameters and
// the connection flags (Limit and Cursor on paged patterns only).
type queryFlags struct {
	Limit     int    `placeholder:"N" help:"Page size (default 50, at most 200)."`
	Cursor    string `placeholder:"C" help:"Continue after the page whose \"next\" this is (with the same other flags)."`
	CursorKey string `name:"cursor-key" sfenv:"STREAMFOLD_CURSOR_KEY" help:"Key signing cursors, 16 bytes or more; local endpoints default to a fixed development key."`
	Now       string `placeholder:"TIME" help:"The clock of relative windows (--stuck-hours, --hours), RFC 3339; default the real time."`
}

// queryPattern is one pattern's command. Flags points to a struct built
// for the pattern: its positional argument (field Arg), its parameters
// (P0, P1, ...), queryFlags and globals, whose --stage is --table-stage
// when the pattern has a stage of its own.
type queryPattern struct {
	Flags any `embed:""`
	pat   query.Pattern
}

func (c queryPattern) Help() string {
	return "The HTTP API answers it at GET " + c.pat.Route + ". Times, paging and cursors: streamfold query --help."
}

// newQueryCmd builds the query command from query.Patterns.
func newQueryCmd() queryCmd {
	var q queryCmd
	for _, p := range query.Patterns() {
		var fields []reflect.StructField
		if p.Arg != "" {
			fields = append(fields, reflect.StructField{Name: "Arg", Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`arg:"" name:%q help:%q`, p.Arg, p.ArgDoc))})
		}
		for i, pr := range p.Params {
			typ := reflect.TypeOf([...]any{query.KindString: "", query.KindInt: int64(0), query.KindFloat: 0.0}[pr.Kind])
			tag := fmt.Sprintf(`name:%q help:%q`, pr.Flag, pr.Doc+".")
			if pr.Default != "" {
				tag += fmt.Sprintf(` default:%q`, pr.Default)
			}
			fields = append(fields, reflect.StructField{Name: fmt.Sprint("P", i), Type: typ, Tag: reflect.StructTag(tag)})
		}
		_, ownStage := p.Param("stage")
		for _, t := range []reflect.Type{reflect.TypeFor[queryFlags](), reflect.TypeFor[globals]()} {
			for f := range t.Fields() {
				if f.IsExported() && (p.Paged || (f.Name != "Limit" && f.Name != "Cursor")) {
					if f.Name == "Stage" && ownStage {
						f.Tag = `name:"table-stage" ` + f.Tag
					}
					fields = append(fields, f)
				}
			}
		}
		plugin := reflect.New(reflect.StructOf([]reflect.StructField{{Name: "P", Type: reflect.TypeFor[queryPattern](), Tag: reflect.StructTag(fmt.Sprintf(`cmd:"" name:%q help:%q`, p.Name, p.Doc))}}))
		plugin.Elem().Field(0).Set(reflect.ValueOf(queryPattern{Flags: reflect.New(reflect.StructOf(fields)).Interface(), pat: p}))
		q.Patterns = append(q.Patterns, plugin.Interface())
	}
	return q
}

func (c *queryPattern) Run(ctx context.Context, env *cliEnv, out *output, kctx *kong.Context) error {
	fv, p, given := reflect.ValueOf(c.Flags).Elem(), c.pat, map[string]bool{}
	var (
		g  globals
		qf queryFlags
	)
	for _, dst := range []reflect.Value{reflect.ValueOf(&g).Elem(), reflect.ValueOf(&qf).Elem()} {
		for i := range dst.NumField() {
			if src := fv.FieldByName(dst.Type().Field(i).Name); src.IsValid() {
				dst.Field(i).Set(src)
			}
		}
	}
	g.fromEnv(env)
	for _, step := range kctx.Path {
		if step.Flag != nil {
			given[step.Flag.Name] = true
		}
	}
	in := &queryview.Args{Pattern: p, Values: map[string]string{}, Given: map[string]bool{}, Request: query.PageRequest{Limit: qf.Limit, Cursor: qf.Cursor}, Clock: env.now().UTC()}
	if p.Arg != "" {
		in.Arg = fv.FieldByName("Arg").String()
	}
	for i, pr := range p.Params {
		in.Values[pr.Name], in.Given[pr.Name] = fmt.Sprint(fv.FieldByName(fmt.Sprint("P", i))), given[pr.Flag]
	}
	s, err := g.settings(), error(nil)
	if qf.Now != "" {
		in.Clock, err = query.ParseTime("now", qf.Now)
	}
	if err = cmp.Or(err, s.Validate()); err != nil {
		return fail(exitUsage, "query %s: %w", p.Name, queryview.Explain(err, in))
	}
	n, _ := s.Naming()
	shards, _ := s.Shards()
	o := queryview.Options{Pattern: p, Input: in, CursorKey: qf.CursorKey, Local: queryview.IsLocal(g.DynamoDBEndpoint), GSIShards: shards}
	if err := o.Validate(); err != nil {
		return fail(exitUsage, "%w", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return fail(exitRuntime, "query: %w", err)
	}
	res, err := queryview.Run(ctx, clients.DynamoDB, n, o)
	if err != nil {
		code := exitUsageOr(err)
		if errors.Is(err, query.ErrNotFound) {
			code = exitFailed
		}
		return fail(code, "query %s: %w", p.Name, err)
	}
	if res.OneOffKey {
		fmt.Fprintln(env.stderr, "streamfold: query: the next cursor is signed with a one-off key and is valid in this invocation only; set STREAMFOLD_CURSOR_KEY to page from the command line")
	}
	return env.render(out, res, res.WriteText)
}

var jobFold = queryview.JobFold // serve's query.Config
