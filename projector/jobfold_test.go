package projector_test

import (
	"reflect"
	"testing"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestJobFold checks that JobFold gives, after each event, the item the
// aggregate fold gives for the same prefix of events.
func TestJobFold(t *testing.T) {
	evs := foldByID(t, foldJobEvents(t, schema.JobSubject(12345, 67893)), "d2-in-progress", "d2-queued", "d2-completed")
	f := projector.NewJobFold()
	if it := f.Item(); it != nil {
		t.Fatalf("Item before any event = %v, want nil", it)
	}
	for i, e := range evs {
		f.Apply(e.E, e.P)
		_, items, _ := foldOne(t, evs[:i+1]...)
		job, _ := jobItems(t, items)
		got, want := foldAttrs(f.Item()), foldAttrs(job)
		if len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s: Item() = %v, want %v", e.E.ID, got, want)
		}
	}
	foldWant(t, f.Item(), map[string]any{"status": "completed", "conclusion": "failure"})
}
