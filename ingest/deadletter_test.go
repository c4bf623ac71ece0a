package ingest

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func TestDeadLetterReason(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not step functions", fmt.Errorf("%w: source %q", ErrNotStepFunctionsEvent, "aws.ec2"), ReasonNotStepFunctions},
		{"state machine gone", &permanentError{err: fmt.Errorf("%w: arn", ErrStateMachineNotFound)}, ReasonStateMachineNotFound},
		{"too large", fmt.Errorf("ingest: step functions event x: %w", &TooLargeError{Limit: schema.MaxItemBytes}), ReasonTooLarge},
		{"validation", fmt.Errorf("ingest: step functions event x: %w", &schema.ValidationError{Errors: []*schema.FieldError{{Field: "data.status", Rule: "is required"}}}), ReasonInvalid},
		{"anything else permanent", errors.New("bad"), ReasonInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DeadLetterReason(tt.err); got != tt.want {
				t.Fatalf("DeadLetterReason = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDeadLetterPosition: entries sort by event time (UTC) and a
// redelivery lands on the same key; an event without an id is keyed by its
// bytes.
func TestDeadLetterPosition(t *testing.T) {
	at := time.Date(2025, 9, 29, 14, 35, 0, 0, time.FixedZone("CEST", 2*3600))
	if got := DeadLetterPosition(EventBridgeEvent{ID: "e-1", Time: at}, []byte(`{}`)); got != "2025-09-29T12:35:00Z#e-1" {
		t.Fatalf("with an id: %q", got)
	}
	a := DeadLetterPosition(EventBridgeEvent{}, []byte(`{"time":"x"}`))
	b := DeadLetterPosition(EventBridgeEvent{}, []byte(`{"time":"y"}`))
	if !regexp.MustCompile(`^0001-01-01T00:00:00Z#sha256:[0-9a-f]{40}$`).MatchString(a) || a == b {
		t.Fatalf("without an id: %q and %q", a, b)
	}
	if again := DeadLetterPosition(EventBridgeEvent{}, []byte(`{"time":"x"}`)); again != a {
		t.Fatalf("the same bytes give %q then %q", a, again)
	}
}

// TestStepFunctionsDeadLetterRecord: the record keeps the event byte for
// byte and the tags, and decodes back; bad records name the field.
func TestStepFunctionsDeadLetterRecord(t *testing.T) {
	raw := readTestdata(t, "eventbridge/execution_failed_full.json")
	d := StepFunctionsDeadLetter{Event: raw, Tags: map[string]string{"Type": "Agent", "Owner": "a&b <team>"}}
	rec, err := d.Record()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseStepFunctionsDeadLetter(rec)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Event) != string(trimmed(raw)) || back.Tags["Owner"] != "a&b <team>" || len(back.Tags) != 2 {
		t.Fatalf("round trip: %+v", back)
	}
	noTags, _ := StepFunctionsDeadLetter{Event: []byte(` {"id":"x"} `)}.Record()
	if noTags != `{"event":{"id":"x"}}` {
		t.Fatalf("without tags: %s", noTags)
	}
	if _, err := (StepFunctionsDeadLetter{Event: []byte(`{`)}).Record(); err == nil || err.Error() != "ingest: dead letter record: event: is not JSON" {
		t.Fatalf("invalid event: %v", err)
	}
	for rec, want := range map[string]string{
		`{"stateMachineTags":{}}`:             "ingest: dead letter record: event: is required",
		`{"event":{},"stateMachineTags":[1]}`: "ingest: dead letter record: stateMachineTags: must be a JSON map, got array",
		`not json`:                            "ingest: dead letter record: invalid JSON at byte 2: invalid character 'o' in literal null (expecting 'u')",
	} {
		if _, err := ParseStepFunctionsDeadLetter(rec); err == nil || err.Error() != want {
			t.Errorf("ParseStepFunctionsDeadLetter(%s) = %v, want %q", rec, err, want)
		}
	}
}

func trimmed(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
