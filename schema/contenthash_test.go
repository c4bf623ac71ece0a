package schema_test

import (
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// TestContentHash: the hash covers type, source, subject, time (as an
// instant) and data (as canonical JSON); it ignores the id, recordedat and
// specversion, the data's layout and member order, and the time's zone.
// The first case's value was computed independently (Python: the
// canonical text written out by hand, hashlib.sha256), so the definition in
// docs/event-contract.md cannot drift silently.
func TestContentHash(t *testing.T) {
	base := schema.Event{
		ID: "e-1", Source: "test", Type: "message.created", Subject: "messages/m-1",
		Time: time.Date(2026, 1, 5, 10, 0, 0, 500_000_000, time.UTC),
		Data: []byte(`{"stage":"dev","message_id":"m-1","payload":{"text":"héllo <b>&","n":1.50}}`),
	}
	const want = "sha256:22d3e3ec9660b4e05f73158d5b47018e8a53591af5fd7365df704fc92c78934d"
	recorded := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		edit func(e *schema.Event)
		same bool
	}{
		{"as is", func(*schema.Event) {}, true},
		{"another id, recordedat and specversion", func(e *schema.Event) { e.ID, e.RecordedAt, e.SpecVersion = "e-2", &recorded, "1.0" }, true},
		{"data laid out and ordered differently", func(e *schema.Event) {
			e.Data = []byte("{ \"payload\": {\"n\": 1.50, \"text\": \"h\\u00e9llo \\u003cb>&\"},\n \"message_id\": \"m-1\", \"stage\": \"dev\" }")
		}, true},
		{"the same instant in another zone", func(e *schema.Event) { e.Time = e.Time.In(time.FixedZone("x", 3600)) }, true},
		{"a number written differently", func(e *schema.Event) {
			e.Data = []byte(`{"stage":"dev","message_id":"m-1","payload":{"text":"héllo <b>&","n":1.5}}`)
		}, false},
		{"another data value", func(e *schema.Event) {
			e.Data = []byte(`{"stage":"prod","message_id":"m-1","payload":{"text":"héllo <b>&","n":1.50}}`)
		}, false},
		{"another time", func(e *schema.Event) { e.Time = e.Time.Add(time.Millisecond) }, false},
		{"another type", func(e *schema.Event) { e.Type = "message.failed" }, false},
		{"another source", func(e *schema.Event) { e.Source = "other" }, false},
		{"another subject", func(e *schema.Event) { e.Subject = "messages/m-2" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			tt.edit(&e)
			got, err := schema.ContentHash(e)
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tt.same {
				t.Fatalf("ContentHash = %s; same as %s: %v, want %v", got, want, got == want, tt.same)
			}
		})
	}
	bad := base
	bad.Data = []byte(`{"a":`)
	if _, err := schema.ContentHash(bad); err == nil {
		t.Fatal("ContentHash of data that is not JSON: no error")
	}
}
