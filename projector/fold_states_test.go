package projector_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

const seed002Arn = "arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"

// TestAgentExecutionSeed002 is seed 002's acceptance example: RUNNING then
// SUCCEEDED, in either order, with a redelivery.
func TestAgentExecutionSeed002(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed002_agent.ndjson"))
	subject := "states/execution/" + seed002Arn
	var mine []foldEvent
	for _, e := range evs {
		if e.E.Subject == subject {
			mine = append(mine, e)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("fixture has %d events of %s, want 2", len(mine), subject)
	}
	running, succeeded := mine[0], mine[1]
	want := map[string]any{
		"executionArn":    seed002Arn,
		"agentName":       "my-agent",
		"startDate":       "2009-02-13T23:31:30.000Z",
		"status":          "SUCCEEDED",
		"stateMachineArn": "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod",
		"executionName":   "abc123",
		"stopDate":        "2009-02-13T23:31:40.000Z",
		"durationSeconds": 10,
		"indexedAt":       "2009-02-13T23:31:41.456Z",
	}
	tests := []struct {
		name  string
		order []foldEvent
	}{
		{"running then succeeded", []foldEvent{running, succeeded}},
		{"succeeded then running", []foldEvent{succeeded, running}},
		{"running redelivered last", []foldEvent{running, succeeded, running}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, cs := foldOne(t, tt.order...)
			if len(items) != 1 || items[0].Table != schema.TableExecutions {
				t.Fatalf("items = %d, want one executions item", len(items))
			}
			if len(items[0].Item) != len(want) {
				t.Errorf("item has %d attributes, want %d: %v", len(items[0].Item), len(want), foldAttrs(items[0].Item))
			}
			foldWant(t, items[0].Item, want)
			if len(cs) != 0 {
				t.Errorf("contributions = %d, want none", len(cs))
			}
			foldRoundTrip(t, projector.KindAgentExecution, a)
		})
	}

	t.Run("running only", func(t *testing.T) {
		_, items, _ := foldOne(t, running)
		foldWant(t, items[0].Item, map[string]any{
			"status": "RUNNING", "startDate": "2009-02-13T23:31:30.000Z", "indexedAt": "2009-02-13T23:31:31.123Z",
			"stopDate": nil, "durationSeconds": nil,
		})
	})
}

func TestAgentExecutionNotAgent(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed002_agent.ndjson"))
	for subject, a := range foldAll(t, evs) {
		if subject == "states/execution/"+seed002Arn {
			continue
		}
		if items := a.Items(); len(items) != 0 {
			t.Errorf("%s: non-agent execution has items: %v", subject, foldAttrs(items[0].Item))
		}
		if cs := a.Contributions(); len(cs) != 0 {
			t.Errorf("%s: non-agent execution has contributions", subject)
		}
	}
}

func TestAgentExecutionTerminalStatuses(t *testing.T) {
	arn := "arn:aws:states:us-west-2:123:execution:sql-agent-prod:x1"
	ev := func(id, status, at string, stop int64) foldEvent {
		d := map[string]any{
			"executionArn": arn, "stateMachineArn": "arn:aws:states:us-west-2:123:stateMachine:sql-agent-prod",
			"name": "x1", "status": status, "startDate": 1767607200000,
			"stateMachineTags": map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent", "Team": "data"},
		}
		if stop > 0 {
			d["stopDate"] = stop
		}
		return foldEv(t, id, schema.TypeExecutionStatusChange, at, d)
	}
	run := ev("e1", "RUNNING", "2026-01-05T10:00:00Z", 0)
	failed := ev("e2", "FAILED", "2026-01-05T10:00:04.5Z", 1767607204500)
	aborted := ev("e3", "ABORTED", "2026-01-05T10:00:09Z", 1767607209000)
	for _, order := range [][]foldEvent{{run, failed}, {failed, run}, {aborted, run, failed}, {failed, aborted}} {
		_, items, _ := foldOne(t, order...)
		want := map[string]any{"status": "FAILED", "durationSeconds": 4, "agentName": "sql-agent", "stopDate": "2026-01-05T10:00:04.500Z"}
		if slices.ContainsFunc(order, func(e foldEvent) bool { return e.E.ID == "e3" }) {
			// Two terminal statuses: the later by (time, id) wins, with its own stop date.
			want = map[string]any{"status": "ABORTED", "durationSeconds": 9, "stopDate": "2026-01-05T10:00:09.000Z"}
		}
		foldWant(t, items[0].Item, want)
	}
}
