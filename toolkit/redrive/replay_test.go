package redrive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/toolkit"
)

func TestLettersText(t *testing.T) {
	letters := []deadletter.Letter{
		{Position: "0001#e1", SequenceNumber: "0001", EventID: "e1", Status: "quarantined", Reason: "poison", Error: "bad type"},
		{Position: "0002#e2", SequenceNumber: "0002", EventID: "e2", Status: "replayed", Reason: "retries-exhausted", Error: "throttled"},
	}
	tests := []struct {
		name string
		l    Letters
		want string
	}{
		{"projector", Letters{Consumer: Projector, Table: "sf-dev-dead-letters", Letters: letters}, `SEQUENCE  EVENT_ID  STATUS       REASON             ERROR
0001      e1        quarantined  poison             bad type
0002      e2        replayed     retries-exhausted  throttled
2 dead letters for consumer "projector" in sf-dev-dead-letters
`},
		{"ingest", Letters{Consumer: Ingest, Table: "t", Letters: letters[:1]}, `POSITION  STATUS       REASON  ERROR
0001#e1   quarantined  poison  bad type
1 dead letters for consumer "ingest" in t
`},
		{"none", Letters{Consumer: "x", Table: "t"}, "SEQUENCE  EVENT_ID  STATUS  REASON  ERROR\n0 dead letters for consumer \"x\" in t\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.l.WriteText(&b); err != nil || b.String() != tt.want {
				t.Fatalf("WriteText: %v\n%s\nwant:\n%s", err, b.String(), tt.want)
			}
		})
	}
	if b, err := json.Marshal(Letters{Consumer: Projector}); err != nil || string(b) != "[]" {
		t.Fatalf("no letters as JSON: %s, %v; want []", b, err)
	}
}

// TestReplayResultJSON: "results" is the ingest consumer's only, and then
// never null.
func TestReplayResultJSON(t *testing.T) {
	tests := []struct {
		name string
		r    ReplayResult
		want string
	}{
		{"stream consumer", ReplayResult{Replayed: 1, StillPoison: []string{}, Failed: []string{"p: x"}}, `{"replayed":1,"stillPoison":[],"failed":["p: x"]}`},
		{"ingest, nothing quarantined", ReplayResult{StillPoison: []string{}, Failed: []string{}, Results: []Replayed{}}, `{"replayed":0,"stillPoison":[],"failed":[],"results":[]}`},
		{"ingest", ReplayResult{Replayed: 1, StillPoison: []string{}, Failed: []string{}, Results: []Replayed{{Position: "p", EventID: "e", Outcome: "appended"}}},
			`{"replayed":1,"stillPoison":[],"failed":[],"results":[{"position":"p","eventId":"e","outcome":"appended"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := json.Marshal(tt.r); err != nil || string(b) != tt.want {
				t.Fatalf("%s, %v; want %s", b, err, tt.want)
			}
		})
	}
}

type marks []string

func (m *marks) MarkReplayed(_ context.Context, d deadletter.Letter) error {
	*m = append(*m, d.Position)
	return nil
}

// TestReplay: only quarantined letters are tried; a poison one is not
// handed over; one the handler fails stays unmarked; the rest are marked.
func TestReplay(t *testing.T) {
	letter := func(seq, typ, status string) deadletter.Letter {
		t.Helper()
		rec := events.DynamoDBEventRecord{EventID: "e" + seq, EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq, NewImage: map[string]events.DynamoDBAttributeValue{
			"subject": events.NewStringAttribute("x/1"), "id": events.NewStringAttribute("i" + seq), "type": events.NewStringAttribute(typ)}}}
		d, err := deadletter.NewLetter(Projector, "poison", rec, errors.New("injected"), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		d.Status = status
		return d
	}
	letters := []deadletter.Letter{letter("1", "nope", "quarantined"), letter("2", "nope", "replayed")}
	var handed int
	handle := func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		handed++
		return events.DynamoDBEventResponse{}, nil
	}
	var m marks
	res := replay(context.Background(), letters, handle, Projector, &m)
	if res.Replayed != 0 || len(res.StillPoison) != 1 || !strings.HasPrefix(res.StillPoison[0], letters[0].Position+": ") || handed != 0 || len(m) != 0 {
		t.Fatalf("%+v after %d handler calls, marked %v; want the quarantined letter still poison, nothing handed over", res, handed, m)
	}
	if _, err := atPosition(letters, "9#none", Projector); err == nil || err.Error() != `consumer "projector" has no dead letter at "9#none"` {
		t.Fatalf("atPosition of no letter: %v", err)
	}
	if got, err := atPosition(letters, letters[1].Position, Projector); err != nil || len(got) != 1 || got[0].Position != letters[1].Position {
		t.Fatalf("atPosition: %v, %v", got, err)
	}
	o := ReplayOptions{Consumer: "reader"}
	if err := o.Validate(); !errors.Is(err, toolkit.ErrInvalidOptions) {
		t.Fatalf("Validate of an unknown consumer: %v", err)
	}
}
