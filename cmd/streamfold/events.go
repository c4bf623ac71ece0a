package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func init() {
	register(command{name: "events", summary: "inspect the event table: summary, or the events of one subject", run: runEvents})
}

const eventsHelp = `Usage:
  streamfold events summary [flags]         counts per domain and type, subjects, time range
  streamfold events list [flags] SUBJECT    every event of one aggregate, oldest first

summary scans the whole event table: it is a development and inspection tool,
not something a dashboard should call. list is a single key query.

Examples:
  streamfold events summary --json
  streamfold events list github/12345/job/67890

Flags:
`

type eventsSummary struct {
	Table     string                `json:"table"`
	Events    int                   `json:"events"`
	Subjects  int                   `json:"subjects"`
	PerDomain map[schema.Domain]int `json:"perDomain"`
	PerType   map[string]int        `json:"perType"`
	First     *time.Time            `json:"firstEventTime,omitempty"`
	Last      *time.Time            `json:"lastEventTime,omitempty"`
}

func runEvents(ctx context.Context, env *cliEnv, args []string) int {
	sub, code, ok := subcommand(env, "events", args, eventsHelp, "summary", "list")
	if !ok {
		return code
	}
	fs := flag.NewFlagSet("events "+sub, flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() { fmt.Fprint(env.stderr, eventsHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args[1:]); !ok {
		return code
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "events: %v", err)
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "events: %v", err)
	}
	table := n.Table(schema.TableEvents)
	if sub == "list" {
		if fs.NArg() != 1 {
			return errorf(env, exitUsage, "events list: want exactly one SUBJECT")
		}
		return listSubject(ctx, env, clients.DynamoDB, table, fs.Arg(0), *asJSON)
	}
	sum := eventsSummary{Table: table, PerDomain: map[schema.Domain]int{}, PerType: map[string]int{}}
	subjects := map[string]bool{}
	p := dynamodb.NewScanPaginator(clients.DynamoDB, &dynamodb.ScanInput{
		TableName:            aws.String(table),
		ProjectionExpression: aws.String("#s, #t, #tm"),
		ExpressionAttributeNames: map[string]string{
			"#s": schema.AttrSubject, "#t": schema.AttrEventType, "#tm": schema.AttrTime,
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return errorf(env, exitRuntime, "events: scan %s: %v", table, err)
		}
		for _, it := range page.Items {
			sum.Events++
			subj, typ, ts := str(it[schema.AttrSubject]), str(it[schema.AttrEventType]), str(it[schema.AttrTime])
			subjects[subj] = true
			sum.PerType[typ]++
			if k, ok := schema.KindOf(typ); ok {
				sum.PerDomain[k.Domain]++
			}
			if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
				if sum.First == nil || t.Before(*sum.First) {
					sum.First = &t
				}
				if sum.Last == nil || t.After(*sum.Last) {
					sum.Last = &t
				}
			}
		}
	}
	sum.Subjects = len(subjects)
	if *asJSON {
		if err := writeJSON(env.stdout, sum); err != nil {
			return errorf(env, exitRuntime, "events: %v", err)
		}
		return exitOK
	}
	fmt.Fprintf(env.stdout, "%s: %d events over %d subjects", table, sum.Events, sum.Subjects)
	if sum.First != nil {
		fmt.Fprintf(env.stdout, ", %s .. %s", sum.First.Format(time.RFC3339), sum.Last.Format(time.RFC3339))
	}
	fmt.Fprintln(env.stdout)
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	for _, d := range schema.Domains() {
		fmt.Fprintf(tw, "  %s\t%d\n", d.Domain, sum.PerDomain[d.Domain])
		for _, t := range d.TypeNames() {
			if sum.PerType[t] == 0 {
				continue
			}
			fmt.Fprintf(tw, "    %s\t%d\n", t, sum.PerType[t])
		}
	}
	tw.Flush()
	return exitOK
}

func listSubject(ctx context.Context, env *cliEnv, api dynamodb.QueryAPIClient, table, subject string, asJSON bool) int {
	var events []schema.Event
	p := dynamodb.NewQueryPaginator(api, &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": schema.AttrSubject},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: subject}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return errorf(env, exitRuntime, "events list: %v", err)
		}
		for _, it := range page.Items {
			e, err := schema.EventFromItem(it)
			if err != nil {
				return errorf(env, exitRuntime, "events list: %v", err)
			}
			events = append(events, e)
		}
	}
	sort.SliceStable(events, func(i, j int) bool {
		if !events[i].Time.Equal(events[j].Time) {
			return events[i].Time.Before(events[j].Time)
		}
		return events[i].RecordedAt != nil && events[j].RecordedAt != nil && events[i].RecordedAt.Before(*events[j].RecordedAt)
	})
	if asJSON {
		if events == nil {
			events = []schema.Event{}
		}
		if err := writeJSON(env.stdout, events); err != nil {
			return errorf(env, exitRuntime, "events list: %v", err)
		}
		return exitOK
	}
	if len(events) == 0 {
		fmt.Fprintf(env.stdout, "no events for subject %q\n", subject)
		return exitOK
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTYPE\tID\tRECORDED")
	for _, e := range events {
		rec := ""
		if e.RecordedAt != nil {
			rec = e.RecordedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.Format(time.RFC3339), e.Type, e.ID, rec)
	}
	tw.Flush()
	return exitOK
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
