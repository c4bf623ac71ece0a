package projector_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestFailedDeriveRepairedByRedelivery: a derive that fails after its
// commit fails the job, and the redelivery repairs the run's status and
// conclusion, whether the redelivered batch holds only the applied events
// (the job is unchanged) or also a later event of the job that moves no
// counter (the job changes, its run row's counters do not).
func TestFailedDeriveRepairedByRedelivery(t *testing.T) {
	evs := foldJobEvents(t, schema.JobSubject(12345, 67890))
	first := foldByID(t, evs, "d-queued-1", "d-in-progress", "d-completed")
	tests := []struct {
		name  string
		again []foldEvent
	}{
		{"redelivery of the applied events", foldByID(t, evs, "d-completed")},
		{"redelivery with a later event that moves no counter", foldByID(t, evs, "d-completed", "r-terminated-1")},
	}
	ctx := context.Background()
	runKey := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: schema.RunKey(12345, 54321, 1)},
		"sk": &types.AttributeValueMemberS{Value: "v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := projector.NewMemStore()
			failing := true
			store.FailDerive = func(string, map[string]types.AttributeValue) error {
				if failing {
					return errors.New("injected: derive throttled")
				}
				return nil
			}
			proj, err := projector.New(store, projector.Config{DeriveBackoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			seq := 0
			inputs := func(fs []foldEvent) []projector.Input {
				var out []projector.Input
				for _, f := range fs {
					seq++
					in, ok, err := projector.InputOf(f.E, fmt.Sprintf("%021d", seq))
					if err != nil || !ok {
						t.Fatalf("InputOf(%s): %v, %v", f.E.ID, ok, err)
					}
					out = append(out, in)
				}
				return out
			}
			out := proj.Project(ctx, inputs(first))
			if _, failed := out.Failed[schema.JobSubject(12345, 67890)]; !failed || out.DeriveErrors == 0 {
				t.Fatalf("first delivery: failed %v, %d derive errors; want the job failed by its run's derive", out.Failed, out.DeriveErrors)
			}
			row, _ := store.Get(ctx, schema.TableWorkflowRuns, runKey)
			if row == nil || row["status"] != nil {
				t.Fatalf("run row after the failed derive: %v; want counters without a status", row)
			}

			failing = false
			if out := proj.Project(ctx, inputs(tt.again)); len(out.Failed) > 0 {
				t.Fatalf("redelivery failed: %v", out.Failed)
			}
			row, _ = store.Get(ctx, schema.TableWorkflowRuns, runKey)
			val := func(k string) string {
				switch v := row[k].(type) {
				case *types.AttributeValueMemberS:
					return v.Value
				case *types.AttributeValueMemberN:
					return v.Value
				}
				return "<absent>"
			}
			got := fmt.Sprintf("status=%s conclusion=%s completed_jobs=%s total_jobs=%s", val("status"), val("conclusion"), val("completed_jobs"), val("total_jobs"))
			if want := "status=completed conclusion=success completed_jobs=1 total_jobs=1"; got != want {
				t.Fatalf("run row after redelivery: %s, want %s", got, want)
			}
		})
	}
}

// TestFailedDeriveRetriedInPlace: a derive that fails once is tried again
// at once (Config.DeriveAttempts), so the batch succeeds and the row is
// right without a redelivery; after DeriveAttempts failures the job fails.
func TestFailedDeriveRetriedInPlace(t *testing.T) {
	evs := foldByID(t, foldJobEvents(t, schema.JobSubject(12345, 67890)), "d-queued-1", "d-in-progress", "d-completed")
	for _, tt := range []struct {
		name       string
		failures   int // derive calls that fail before one succeeds
		wantFailed bool
	}{
		{"one failure", 1, false},
		{"three failures", 3, false},
		{"four failures", 4, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := projector.NewMemStore()
			calls := 0
			store.FailDerive = func(table string, _ map[string]types.AttributeValue) error {
				if table != schema.TableWorkflowRuns {
					return nil
				}
				calls++
				if calls <= tt.failures {
					return errors.New("injected: derive throttled")
				}
				return nil
			}
			proj, err := projector.New(store, projector.Config{DeriveAttempts: 4, DeriveBackoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var inputs []projector.Input
			for i, f := range evs {
				in, _, err := projector.InputOf(f.E, fmt.Sprintf("%021d", i+1))
				if err != nil {
					t.Fatal(err)
				}
				inputs = append(inputs, in)
			}
			out := proj.Project(context.Background(), inputs)
			if _, failed := out.Failed[schema.JobSubject(12345, 67890)]; failed != tt.wantFailed {
				t.Fatalf("job failed = %v (%v), want %v", failed, out.Failed, tt.wantFailed)
			}
			if want := min(tt.failures+1, 4); calls != want {
				t.Errorf("%d derive calls on the run row, want %d", calls, want)
			}
		})
	}
}
