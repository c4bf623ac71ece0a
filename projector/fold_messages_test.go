package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestMessageSeed004 follows seed 004's messages: created -> queued ->
// processing -> completed, and a manual notification that fails after a
// retry, through prefixes and in reverse.
func TestMessageSeed004(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed004_messages.ndjson"))
	of := func(id string) []foldEvent {
		var out []foldEvent
		for _, e := range evs {
			if e.E.Subject == "messages/"+id {
				out = append(out, e)
			}
		}
		return out
	}
	m1 := of("550e8400-e29b-41d4-a716-446655440000")
	m2 := of("7a1c2b3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	rev := func(evs []foldEvent) []foldEvent {
		out := make([]foldEvent, len(evs))
		for i, e := range evs {
			out[len(evs)-1-i] = e
		}
		return out
	}
	tests := []struct {
		name    string
		evs     []foldEvent
		want    map[string]any
		counter string
	}{
		{"created", m1[:1], map[string]any{
			"message_id": "550e8400-e29b-41d4-a716-446655440000", "created_date": "2025-10-21T14:30:00.000Z",
			"created_by": "scheduler", "stage": "dev", "message_type": "scheduled_hello", "status": "created",
			"updated_date": "2025-10-21T14:30:00.050Z", "correlation_id": "660e9500-f39c-52e5-b827-557766551111",
			"ttl": 1768833000, "processing_started_at": nil, "processing_completed_at": nil, "retry_count": nil,
			"payload": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
				"text":     &types.AttributeValueMemberS{Value: "hello world"},
				"priority": &types.AttributeValueMemberS{Value: "default"},
				"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{
					&types.AttributeValueMemberS{Value: "scheduled"}, &types.AttributeValueMemberS{Value: "daily"}}},
			}},
		}, "created"},
		{"queued", m1[:2], map[string]any{"status": "queued"}, "queued"},
		{"processing", m1[:3], map[string]any{"status": "processing", "processing_started_at": "2025-10-21T14:30:05.000Z", "retry_count": 0}, "processing"},
		{"completed", m1, map[string]any{
			"status": "completed", "processing_completed_at": "2025-10-21T14:30:15.000Z", "notification_id": "ntfy_abc123",
			"updated_date": "2025-10-21T14:30:15.020Z", "error_message": nil,
		}, "completed"},
		{"completed, in reverse", rev(m1), map[string]any{"status": "completed", "created_date": "2025-10-21T14:30:00.000Z"}, "completed"},
		{"failed", rev(m2), map[string]any{
			"status": "failed", "error_message": "ntfy.sh returned 503", "retry_count": 1,
			"processing_started_at": "2025-10-21T14:31:01.000Z", "processing_completed_at": "2025-10-21T14:31:07.000Z",
		}, "failed"},
		{"processing before created: created_date from the first event", m2[3:4], map[string]any{
			"status": "processing", "created_date": "2025-10-21T14:31:05.000Z", "created_by": nil, "payload": nil, "retry_count": 1,
		}, "processing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, cs := foldOne(t, tt.evs...)
			if len(items) != 1 || items[0].Table != schema.TableMessages {
				t.Fatalf("items = %v", items)
			}
			foldWant(t, items[0].Item, tt.want)
			if len(cs) != 1 || cs[0].Table != schema.TableMetrics {
				t.Fatalf("contributions = %v", cs)
			}
			foldWant(t, cs[0].Key, map[string]any{"scope": "messages/dev", "date": "2025-10-21"})
			for _, st := range []string{"created", "queued", "processing", "completed", "failed"} {
				want := int64(0)
				if st == tt.counter {
					want = 1
				}
				if cs[0].Counters[st] != want {
					t.Errorf("counter %s = %d, want %d", st, cs[0].Counters[st], want)
				}
			}
			if cs[0].Counters["total"] != 1 {
				t.Errorf("total = %d, want 1", cs[0].Counters["total"])
			}
			foldRoundTrip(t, projector.KindMessage, a)
			foldCheckKeys(t, a)
		})
	}
}

func TestMessageCompletedAndFailed(t *testing.T) {
	const id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	ev := func(evID, typ, at string, extra map[string]any) foldEvent {
		d := map[string]any{"message_id": id, "stage": "prod"}
		for k, v := range extra {
			d[k] = v
		}
		return foldEv(t, evID, typ, at, d)
	}
	completed := ev("c", schema.TypeMessageCompleted, "2026-01-05T10:00:03Z", map[string]any{"notification_id": "ntfy_1"})
	failed := ev("f", schema.TypeMessageFailed, "2026-01-05T10:00:02Z", map[string]any{"error_message": "503"})
	processing := ev("p", schema.TypeMessageProcessing, "2026-01-05T10:00:05Z", map[string]any{"retry_count": 2})
	for _, order := range [][]foldEvent{{completed, failed, processing}, {processing, failed, completed}} {
		_, items, _ := foldOne(t, order...)
		// Terminal statuses absorb a later processing; of two terminal ones the later wins.
		foldWant(t, items[0].Item, map[string]any{"status": "completed", "error_message": nil,
			"processing_completed_at": "2026-01-05T10:00:03.000Z", "retry_count": 2, "created_date": "2026-01-05T10:00:02.000Z"})
	}
}
