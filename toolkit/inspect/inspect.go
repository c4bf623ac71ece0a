// Package inspect provides the inspection workflows of "streamfold events"
// and "streamfold summary": what the event table holds (counts per domain
// and type, subjects, time range), the events of one subject, and what was
// projected (items per table, the daily metrics rows).
//
// EventCounts and Projections scan whole tables: development and
// inspection tools, not something a dashboard should call. Subject is a
// single key query. Each result has a WriteText method for people and
// encodes as the CLI's --json.
package inspect

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

// EventsSummary is what the event table holds.
type EventsSummary struct {
	Table     string                `json:"table"`
	Events    int                   `json:"events"`
	Subjects  int                   `json:"subjects"`
	PerDomain map[schema.Domain]int `json:"perDomain"`
	PerType   map[string]int        `json:"perType"`
	First     *time.Time            `json:"firstEventTime,omitempty"`
	Last      *time.Time            `json:"lastEventTime,omitempty"`
}

// EventCounts scans n's event table through api and counts its events
// per domain and type, its subjects and its time range.
func EventCounts(ctx context.Context, api dynamodb.ScanAPIClient, n schema.Naming) (*EventsSummary, error) {
	table := n.Table(schema.TableEvents)
	sum := &EventsSummary{Table: table, PerDomain: map[schema.Domain]int{}, PerType: map[string]int{}}
	subjects := map[string]bool{}
	p := dynamodb.NewScanPaginator(api, &dynamodb.ScanInput{
		TableName:            aws.String(table),
		ProjectionExpression: aws.String("#s, #t, #tm"),
		ExpressionAttributeNames: map[string]string{
			"#s": schema.AttrSubject, "#t": schema.AttrEventType, "#tm": schema.AttrTime,
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, it := range page.Items {
			subjects[str(it[schema.AttrSubject])] = true
			sum.add(str(it[schema.AttrEventType]), str(it[schema.AttrTime]))
		}
	}
	sum.Subjects = len(subjects)
	return sum, nil
}

// add counts one event of type typ at ts (RFC 3339; another form is not
// in the time range).
func (s *EventsSummary) add(typ, ts string) {
	s.Events++
	s.PerType[typ]++
	if k, ok := schema.KindOf(typ); ok {
		s.PerDomain[k.Domain]++
	}
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		if s.First == nil || t.Before(*s.First) {
			s.First = &t
		}
		if s.Last == nil || t.After(*s.Last) {
			s.Last = &t
		}
	}
}

// WriteText prints the counts: a line for the table, then per domain its
// count and the counts of its types that occur.
func (s *EventsSummary) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s: %d events over %d subjects", s.Table, s.Events, s.Subjects)
	if s.First != nil {
		fmt.Fprintf(w, ", %s .. %s", s.First.Format(time.RFC3339), s.Last.Format(time.RFC3339))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, d := range schema.Domains() {
		fmt.Fprintf(tw, "  %s\t%d\n", d.Domain, s.PerDomain[d.Domain])
		for _, t := range d.TypeNames() {
			if s.PerType[t] > 0 {
				fmt.Fprintf(tw, "    %s\t%d\n", t, s.PerType[t])
			}
		}
	}
	return tw.Flush()
}

// SubjectOptions name the subject Subject lists.
type SubjectOptions struct {
	// Subject is the aggregate, e.g. github/12345/job/67890.
	Subject string
}

// Validate checks the options; its errors name the field at fault.
func (o *SubjectOptions) Validate() error {
	if o.Subject == "" {
		return toolkit.Invalid("events list", "Subject", nil, "is required")
	}
	return nil
}

// SubjectEvents are the events of one subject, oldest first.
type SubjectEvents struct {
	Subject string
	Events  []schema.Event
}

// Subject queries n's event table through api for every event of one
// subject, ordered by time, then by when they were appended.
func Subject(ctx context.Context, api dynamodb.QueryAPIClient, n schema.Naming, o SubjectOptions) (*SubjectEvents, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	res := &SubjectEvents{Subject: o.Subject, Events: []schema.Event{}}
	p := dynamodb.NewQueryPaginator(api, &dynamodb.QueryInput{
		TableName:                 aws.String(n.Table(schema.TableEvents)),
		KeyConditionExpression:    aws.String("#s = :s"),
		ExpressionAttributeNames:  map[string]string{"#s": schema.AttrSubject},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: o.Subject}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			e, err := schema.EventFromItem(it)
			if err != nil {
				return nil, err
			}
			res.Events = append(res.Events, e)
		}
	}
	sortEvents(res.Events)
	return res, nil
}

// sortEvents orders events by time, then by when they were appended.
func sortEvents(events []schema.Event) {
	sort.SliceStable(events, func(i, j int) bool {
		if !events[i].Time.Equal(events[j].Time) {
			return events[i].Time.Before(events[j].Time)
		}
		return events[i].RecordedAt != nil && events[j].RecordedAt != nil && events[i].RecordedAt.Before(*events[j].RecordedAt)
	})
}

// WriteText prints a table of the events (time, type, id, when recorded),
// or says there are none.
func (s *SubjectEvents) WriteText(w io.Writer) error {
	if len(s.Events) == 0 {
		_, err := fmt.Fprintf(w, "no events for subject %q\n", s.Subject)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTYPE\tID\tRECORDED")
	for _, e := range s.Events {
		rec := ""
		if e.RecordedAt != nil {
			rec = e.RecordedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.Format(time.RFC3339), e.Type, e.ID, rec)
	}
	return tw.Flush()
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
