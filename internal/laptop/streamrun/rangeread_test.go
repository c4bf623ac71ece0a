package streamrun

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestReadRange reads ranges of a fake shard: exactly the records from
// start to end, across GetRecords pages; a range past the trim horizon or
// on a gone shard wraps ErrTrimmed; one past the last record of an open
// shard returns what there is and wraps ErrRangeIncomplete.
func TestReadRange(t *testing.T) {
	f := newFake()
	f.perCall = 7
	f.addShard("s", "")
	seqs := f.put("s", 60)
	f.trimTo("s", 5)
	arn := "arn:aws:dynamodb:eu-west-1:123456789012:table/t/stream/2026-01-01T00:00:00.000"
	ctx := context.Background()
	tests := []struct {
		name       string
		r          Range
		want       []string
		wantErr    error
		wantErrMsg string
	}{
		{"middle, over several pages", Range{arn, "s", seqs[10], seqs[39]}, seqs[10:40], nil, ""},
		{"one record", Range{arn, "s", seqs[5], seqs[5]}, seqs[5:6], nil, ""},
		{"to the last record", Range{arn, "s", seqs[50], seqs[59]}, seqs[50:60], nil, ""},
		{"past the trim horizon", Range{arn, "s", seqs[2], seqs[20]}, nil, ErrTrimmed, ""},
		{"gone shard", Range{arn, "nope", seqs[10], seqs[20]}, nil, ErrTrimmed, ""},
		{"end not reached", Range{arn, "s", seqs[55], "99999999999999999999999"}, seqs[55:60], ErrRangeIncomplete, ""},
		{"no shard", Range{arn, "", seqs[1], seqs[2]}, nil, nil, "streamrun: range: shardId is required"},
		{"reversed", Range{arn, "s", seqs[9], seqs[8]}, nil, nil, "is after endSequenceNumber"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := ReadRange(ctx, f, tt.r)
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			case tt.wantErrMsg != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErrMsg)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantErrMsg)
			case tt.wantErr == nil && tt.wantErrMsg == "" && err != nil:
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Change.SequenceNumber)
				if r.AWSRegion != "eu-west-1" || r.EventSourceArn != arn || r.EventName != "INSERT" {
					t.Fatalf("record %s: region %q, source %q, name %q", r.Change.SequenceNumber, r.AWSRegion, r.EventSourceArn, r.EventName)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("read %v, want %v", got, tt.want)
			}
		})
	}
}
