package emit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/emit"
)

func TestValidate(t *testing.T) {
	in := strings.NewReader("")
	tests := []struct {
		name  string
		opts  emit.Options
		field string // "" = valid
	}{
		{"defaults", emit.Options{Input: in}, ""},
		{"every policy", emit.Options{Input: in, SFNPayloads: "keep", MaxFutureSkew: time.Hour, BatchLines: 10}, ""},
		{"no input", emit.Options{}, "Input"},
		{"negative batch", emit.Options{Input: in, BatchLines: -1}, "BatchLines"},
		{"negative skew", emit.Options{Input: in, MaxFutureSkew: -time.Hour}, "MaxFutureSkew"},
		{"skew above the bound", emit.Options{Input: in, MaxFutureSkew: ingest.MaxMaxFutureSkew + time.Hour}, "MaxFutureSkew"},
		{"unknown policy", emit.Options{Input: in, SFNPayloads: "shred"}, "SFNPayloads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var oe *toolkit.OptionsError
			if !errors.As(err, &oe) || oe.Field != tt.field || oe.Workflow != "emit" || !errors.Is(err, toolkit.ErrInvalidOptions) {
				t.Fatalf("Validate() = %v, want an *OptionsError of emit naming %s", err, tt.field)
			}
		})
	}
}

func TestTagSource(t *testing.T) {
	calls := 0
	aws := func() ingest.TagLister { calls++; return nil }
	for _, tt := range []struct {
		spec  string
		local bool
		isNil bool
	}{
		{"", true, true},      // local: none
		{"none", false, true}, // explicit none
		{"", false, false},    // AWS: the tag cache
		{"aws", true, false},  // explicit aws, even locally
		{"testdata/tags.json", false, false},
	} {
		src, err := emit.TagSource(tt.spec, tt.local, aws)
		if err != nil {
			t.Fatalf("TagSource(%q, %v): %v", tt.spec, tt.local, err)
		}
		if (src == nil) != tt.isNil {
			t.Errorf("TagSource(%q, %v) = %v, want nil %v", tt.spec, tt.local, src, tt.isNil)
		}
	}
	if calls != 2 {
		t.Errorf("the AWS lister was built %d times, want 2 (once per aws source)", calls)
	}
	if _, err := emit.TagSource("testdata/missing.json", false, aws); err == nil || !strings.Contains(err.Error(), "testdata/missing.json") {
		t.Errorf("a missing tags file: err = %v, want one naming it", err)
	}
}

// TestRunDynamoDBLocal appends a small file twice against DynamoDB Local:
// the first run writes every valid line and reports the invalid one by
// number, the second writes nothing and counts duplicates, and both report
// what the appends cost.
func TestRunDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	line := `{"id": "toolkit-emit-1", "source": "rez_agent/dev", "type": "rez.message.created", "time": "2025-10-21T14:30:00Z", "data": {"message_id": "550e8400-e29b-41d4-a716-446655440000", "stage": "dev", "message_type": "scheduled_hello", "created_by": "scheduler", "payload": {"text": "hello"}, "correlation_id": "660e9500-f39c-52e5-b827-557766551111"}}`
	lines := line + "\nnot json\n"
	run := func() *emit.Result {
		res, err := emit.Run(context.Background(), c, n, true, emit.Options{Input: strings.NewReader(lines)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := run()
	if first.Accepted != 1 || len(first.Rejected) != 1 || first.Rejected[0].Line != 2 {
		t.Fatalf("first run: %+v, want line 2 rejected", first.EmitSummary)
	}
	if first.ConsumedCapacity == nil || first.ConsumedCapacity.Write < 1 {
		t.Fatalf("first run: %d accepted for %+v capacity", first.Accepted, first.ConsumedCapacity)
	}
	second := run()
	if second.Accepted != 0 || second.Duplicates != 1 {
		t.Fatalf("second run: %+v, want 1 duplicate and nothing accepted", second.EmitSummary)
	}
}
