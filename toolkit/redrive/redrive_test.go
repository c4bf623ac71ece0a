package redrive

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/toolkit"
)

// TestNewPlan: a batch whose on-failure record carried its records is
// redriven from them, the others from the stream; a batch that failed in
// the other consumer's function is refused, naming it.
func TestNewPlan(t *testing.T) {
	rng := streamrun.Range{StreamARN: "arn:s", ShardID: "s", Start: "1", End: "2"}
	recs := []events.DynamoDBEventRecord{{EventID: "e1"}}
	tests := []struct {
		name        string
		consumer    string
		batches     []Batch
		wantSources []string
		wantErr     string
	}{
		{"payload and stream", Projector, []Batch{
			{Where: "value 1", Function: "sf-dev-projector", Range: rng, Records: recs},
			{Where: "value 2", Range: rng},
		}, []string{"payload", "stream"}, ""},
		{"an empty payload is still the payload", Archiver, []Batch{{Where: "value 1", Range: rng, Records: []events.DynamoDBEventRecord{}}}, []string{"payload"}, ""},
		{"another consumer's batch", Archiver, []Batch{
			{Where: "value 1", Function: "sf-dev-archiver", Range: rng},
			{Where: "s3://b/k value 1", Function: "sf-dev-projector", Range: rng},
		}, nil, "redrive: Options.Input: s3://b/k value 1: the batch failed in function sf-dev-projector, not in the archiver (Consumer archiver); redrive it with the consumer of that function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPlan(tt.consumer, tt.batches, true)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, toolkit.ErrInvalidOptions) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sources []string
			for i, s := range p.Steps {
				sources = append(sources, s.Source)
				if s.Batch.Where != tt.batches[i].Where {
					t.Errorf("step %d is batch %s, want %s", i, s.Batch.Where, tt.batches[i].Where)
				}
			}
			if !slices.Equal(sources, tt.wantSources) || p.Consumer != tt.consumer || !p.DryRun {
				t.Fatalf("plan %+v: sources %v, want %v", p, sources, tt.wantSources)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"projector", Options{Consumer: Projector, Input: "-"}, ""},
		{"archiver", Options{Consumer: Archiver, Input: "s3://b/p/"}, ""},
		{"ingest", Options{Consumer: Ingest, Input: "-"}, `redrive: Options.Consumer: must be projector or archiver (the ingest function's failures are dead letters: use list and replay), got "ingest"`},
		{"no input", Options{Consumer: Projector}, "redrive: Options.Input: required: a file (- for standard input), s3://BUCKET/KEY or s3://BUCKET/PREFIX/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && (err.Error() != tt.wantErr || !errors.Is(err, toolkit.ErrInvalidOptions))) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestReadFile: a file that is not there or not on-failure records is an
// invalid Input naming it; "-" reads Stdin.
func TestReadFile(t *testing.T) {
	ctx := context.Background()
	if _, err := Read(ctx, nil, Options{Input: "testdata/none.json"}); !errors.Is(err, toolkit.ErrInvalidOptions) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Read(ctx, nil, Options{Input: "testdata/bad_kinesis.json"}); !errors.Is(err, toolkit.ErrInvalidOptions) || !strings.Contains(err.Error(), "testdata/bad_kinesis.json: value 1: no DDBStreamBatchInfo") {
		t.Fatalf("bad file: %v", err)
	}
	b, err := os.ReadFile("testdata/records.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(ctx, nil, Options{Input: "-", Stdin: bytes.NewReader(b)})
	if err != nil || len(got) != 2 {
		t.Fatalf("stdin: %d batches, %v; want 2", len(got), err)
	}
}

// TestExecuteTotals: the totals count the batches by outcome; a dry run
// hands nothing over.
func TestExecuteTotals(t *testing.T) {
	recs := []events.DynamoDBEventRecord{{Change: events.DynamoDBStreamRecord{SequenceNumber: "1"}}, {Change: events.DynamoDBStreamRecord{SequenceNumber: "2"}}}
	b := Batch{Where: "value 1", Records: recs, BatchSize: 2, Range: streamrun.Range{ShardID: "s", Start: "1", End: "2"}}
	calls := 0
	handle := func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		calls++
		return events.DynamoDBEventResponse{}, nil
	}
	for _, dry := range []bool{true, false} {
		p, err := NewPlan(Projector, []Batch{b, b}, dry)
		if err != nil {
			t.Fatal(err)
		}
		res := p.Execute(context.Background(), nil, handle, nil)
		want := Totals{Batches: 2, Read: 4, Redriven: 4}
		outcome := "redriven"
		if dry {
			want.Redriven, outcome = 0, "read"
		}
		if res.Totals != want || res.Batches[1].Outcome != outcome || res.DryRun != dry || res.Consumer != Projector {
			t.Fatalf("dry run %v: %+v, want totals %+v and outcome %s", dry, res, want, outcome)
		}
	}
	if calls != 2 {
		t.Fatalf("%d handler calls, want 2 (one per batch, none in the dry run)", calls)
	}
}

// TestRedriveDelivery: Execute hands the records to the handler with the
// runner's event-source-mapping delivery (streamrun.Delivery): in batches
// of 100, resuming at the lowest record the handler reports failed; an
// ItemIdentifier that is not in the batch fails the whole batch, retried
// from its first record; a batch still failing after Attempts
// attempts fails its on-failure batch, counting what was redriven before.
func TestRedriveDelivery(t *testing.T) {
	recs := make([]events.DynamoDBEventRecord, 150)
	for i := range recs {
		recs[i].Change.SequenceNumber = strconv.Itoa(1000 + i)
	}
	plan, err := NewPlan(Projector, []Batch{{Where: "value 1", Records: recs, Range: streamrun.Range{ShardID: "s", Start: "1000", End: "1149"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		respond      func(call int, first string) events.DynamoDBEventResponse
		wantOutcome  string
		wantRedriven int
		wantFirsts   []string // the first record of each call
	}{
		{"resumes at the reported record", func(call int, _ string) events.DynamoDBEventResponse {
			if call == 0 {
				return itemFailures("1040", "1060")
			}
			return events.DynamoDBEventResponse{}
		}, "redriven", 150, []string{"1000", "1040", "1100"}},
		{"an unknown item fails the whole batch", func(call int, _ string) events.DynamoDBEventResponse {
			if call == 0 {
				return itemFailures("1040", "999")
			}
			return events.DynamoDBEventResponse{}
		}, "redriven", 150, []string{"1000", "1000", "1100"}},
		{"attempts exhausted", func(_ int, first string) events.DynamoDBEventResponse {
			if first >= "1100" {
				return itemFailures("1120")
			}
			return events.DynamoDBEventResponse{}
		}, "failed", 120, []string{"1000", "1100", "1120", "1120", "1120", "1120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var firsts []string
			handle := func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
				first := ev.Records[0].Change.SequenceNumber
				firsts = append(firsts, first)
				return tt.respond(len(firsts)-1, first), nil
			}
			res := plan.Execute(context.Background(), nil, handle, nil)
			b := res.Batches[0]
			if b.Outcome != tt.wantOutcome || b.Redriven != tt.wantRedriven || b.Source != "payload" || !slices.Equal(firsts, tt.wantFirsts) {
				t.Fatalf("batch %+v after calls starting at %v; want %s, %d redriven, calls starting at %v", b, firsts, tt.wantOutcome, tt.wantRedriven, tt.wantFirsts)
			}
			if tt.wantOutcome == "failed" && !strings.Contains(b.Error, "after 5 attempts") {
				t.Fatalf("error %q does not say how often it was tried", b.Error)
			}
		})
	}
}

func itemFailures(ids ...string) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	for _, id := range ids {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
	}
	return resp
}
