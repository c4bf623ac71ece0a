package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

const (
	foldExecSF  = "3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b"
	foldExecLDF = "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
	foldExecBad = "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e"
)

// TestAlbumSeed001 checks seed 001's entities folded from the fixture: an sf
// execution with two albums and a validation task, an ldf execution, and a
// failed sf execution whose started event is missing.
func TestAlbumSeed001(t *testing.T) {
	evs := foldLoad(t, filepath.Join("testdata", "fold", "seed001_albums.ndjson"))
	aggs := foldAll(t, evs)

	sf := aggs["albums/execution/"+foldExecSF]
	items := sf.Items()
	if len(items) != 3 {
		t.Fatalf("sf execution: %d items, want execution + 2 albums", len(items))
	}
	foldWant(t, items[0].Item, map[string]any{
		"pk": foldExecSF, "sk": "metadata", "entityType": "execution", "workflowType": "step-functions",
		"executionId": foldExecSF, "imageS3Key": "uploads/albums-2025-01-15.jpg", "status": "completed",
		"currentStep": "price-lookup", "startTime": "2025-01-15T10:30:00.000Z", "endTime": "2025-01-15T10:33:08.500Z",
		"durationMs": 188500, "createdAt": "2025-01-15T10:30:00.000Z", "updatedAt": "2025-01-15T10:33:08.500Z", "sortValue": 0,
	})
	foldWant(t, items[2].Item, map[string]any{
		"pk": foldExecSF, "sk": "album-2", "entityType": "album", "albumIndex": 2, "sortValue": 2,
		"albumName": "Abbey Road", "artist": "The Beatles", "year": 1969, "yearValidated": true, "yearOriginal": 1968,
		"priceSource": "ebay", "workflowType": "step-functions", "executionId": foldExecSF,
		"createdAt": "2025-01-15T10:30:11.000Z", "updatedAt": "2025-01-15T10:33:08.000Z",
	})

	task := aggs["albums/task/task-abc123"]
	foldWant(t, task.Items()[0].Item, map[string]any{
		"pk": "task-abc123", "sk": "metadata", "entityType": "task", "status": "completed", "executionId": foldExecSF,
		"createdAt": "2025-01-15T10:30:12.500Z", "completedAt": "2025-01-15T10:33:00.000Z", "sortValue": 1736937012500,
		"expiresAt": "2025-01-15T11:30:12.000Z", "updatedAt": "2025-01-15T10:33:00.100Z",
	})

	type row struct {
		pk, sk string
		c      map[string]int64
	}
	for _, w := range []row{
		{"2025-01-15", "metrics-step-functions", map[string]int64{"executionCount": 1, "successCount": 1, "failureCount": 0, "durationSumMs": 188500, "durationCount": 1, "totalCost": 6_200_000}},
		{"2025-01-15", "metrics-durable-functions", map[string]int64{"executionCount": 1, "successCount": 1, "failureCount": 0, "durationSumMs": 20000, "durationCount": 1, "totalCost": 2_100_000}},
		{"2025-01-14", "metrics-step-functions", map[string]int64{"executionCount": 1, "successCount": 0, "failureCount": 1, "durationSumMs": 10000, "durationCount": 1, "totalCost": 4_100_000}},
	} {
		var found bool
		for _, c := range foldRows(foldAllContributions(aggs)) {
			pk := foldAV(c.Key["pk"]).(map[string]any)["S"]
			sk := foldAV(c.Key["sk"]).(map[string]any)["S"]
			if pk != w.pk || sk != w.sk {
				continue
			}
			found = true
			for k, v := range w.c {
				if c.Counters[k] != v {
					t.Errorf("%s %s: %s = %d, want %d", w.pk, w.sk, k, c.Counters[k], v)
				}
			}
			if c.Scale["totalCost"] != 9 {
				t.Errorf("%s %s: totalCost scale %d, want 9", w.pk, w.sk, c.Scale["totalCost"])
			}
			foldWant(t, c.Attrs, map[string]any{"entityType": "metrics", "period": "daily", "status": "daily",
				"date": w.pk, "createdAt": w.pk + "T00:00:00.000Z"})
		}
		if !found {
			t.Errorf("no metrics row %s %s", w.pk, w.sk)
		}
	}
}

func foldAllContributions(aggs map[string]projector.Aggregate) []projector.Contribution {
	var out []projector.Contribution
	for _, a := range aggs {
		out = append(out, a.Contributions()...)
	}
	return out
}

func TestAlbumExecutionStatus(t *testing.T) {
	const id = "0d3c2b1a-9f8e-4d7c-8b6a-5f4e3d2c1b0a"
	ex := func(evID, typ, at string, extra map[string]any) foldEvent {
		d := map[string]any{"workflowType": "durable-functions", "executionId": id}
		for k, v := range extra {
			d[k] = v
		}
		return foldEv(t, evID, typ, at, d)
	}
	started := ex("s", schema.TypeAlbumExecutionStarted, "2026-01-05T10:00:00Z", map[string]any{"imageS3Key": "k.jpg"})
	waiting := ex("w", schema.TypeAlbumExecutionWaiting, "2026-01-05T10:00:10Z", map[string]any{"currentStep": "human-validation"})
	step := ex("v", schema.TypeAlbumExecutionStep, "2026-01-05T10:05:00Z", map[string]any{"currentStep": "album-validation"})
	completed := ex("c", schema.TypeAlbumExecutionCompleted, "2026-01-05T10:06:00Z", map[string]any{"durationMs": 360000, "estimatedCost": 0.003})
	failed := ex("f", schema.TypeAlbumExecutionFailed, "2026-01-05T10:07:00Z", map[string]any{"error": "boom"})
	tests := []struct {
		name  string
		order []foldEvent
		want  map[string]any
	}{
		{"waiting", []foldEvent{waiting, started}, map[string]any{"status": "waiting", "currentStep": "human-validation", "endTime": nil}},
		{"running again after waiting", []foldEvent{step, started, waiting}, map[string]any{"status": "running", "currentStep": "album-validation"}},
		{"completed absorbs a late step", []foldEvent{completed, step, waiting, started},
			map[string]any{"status": "completed", "endTime": "2026-01-05T10:06:00.000Z", "durationMs": 360000, "error": nil}},
		{"completed and failed: the later wins", []foldEvent{failed, completed, started},
			map[string]any{"status": "failed", "endTime": "2026-01-05T10:07:00.000Z", "error": "boom", "durationMs": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, items, cs := foldOne(t, tt.order...)
			foldWant(t, items[0].Item, tt.want)
			foldRoundTrip(t, projector.KindAlbumExecution, a)
			if len(cs) != 1 || cs[0].Counters["executionCount"] != 1 {
				t.Fatalf("contributions = %v", cs)
			}
		})
	}
}

func TestAlbumValidatedYearWins(t *testing.T) {
	const id = "1e2d3c4b-5a69-4788-9aab-bccddeeff001"
	extracted := foldEv(t, "x", schema.TypeAlbumExtracted, "2026-01-05T10:00:05Z", map[string]any{
		"workflowType": "step-functions", "executionId": id, "albumIndex": 3, "albumName": "Blue", "artist": "Joni Mitchell", "year": 1972})
	// The validator's clock is behind: its event is earlier, but a validated
	// year still beats an extracted one.
	validated := foldEv(t, "v", schema.TypeAlbumValidated, "2026-01-05T10:00:04Z", map[string]any{
		"workflowType": "step-functions", "executionId": id, "albumIndex": 3, "year": 1971, "yearValidated": true, "yearOriginal": 1972})
	for _, order := range [][]foldEvent{{extracted, validated}, {validated, extracted}} {
		_, items, cs := foldOne(t, order...)
		if len(items) != 2 {
			t.Fatalf("items = %d, want execution + album", len(items))
		}
		foldWant(t, items[0].Item, map[string]any{"status": nil, "createdAt": "2026-01-05T10:00:04.000Z", "startTime": nil})
		foldWant(t, items[1].Item, map[string]any{"sk": "album-3", "year": 1971, "yearOriginal": 1972, "albumName": "Blue", "createdAt": "2026-01-05T10:00:04.000Z"})
		if len(cs) != 1 || cs[0].Counters["executionCount"] != 1 || cs[0].Counters["successCount"] != 0 {
			t.Fatalf("contributions = %v", cs)
		}
	}
}

func TestTaskStatus(t *testing.T) {
	tk := func(id, typ, at string, extra map[string]any) foldEvent {
		d := map[string]any{"workflowType": "durable-functions", "taskId": "t-1", "executionId": "1e2d3c4b-5a69-4788-9aab-bccddeeff001"}
		for k, v := range extra {
			d[k] = v
		}
		return foldEv(t, id, typ, at, d)
	}
	created := tk("c", schema.TypeTaskCreated, "2026-01-05T10:00:00Z", map[string]any{
		"imageS3Key": "k.jpg", "taskToken": "cb-1", "expiresAt": "2026-01-05T11:00:00Z",
		"albums": []map[string]any{{"albumIndex": 1, "albumName": "Blue", "artist": "Joni Mitchell", "year": 1971}}})
	expired := tk("e", schema.TypeTaskExpired, "2026-01-05T11:00:00Z", nil)
	for _, order := range [][]foldEvent{{created, expired}, {expired, created}} {
		a, items, _ := foldOne(t, order...)
		foldWant(t, items[0].Item, map[string]any{"status": "expired", "completedAt": nil, "createdAt": "2026-01-05T10:00:00.000Z",
			"sortValue": 1767607200000, "validatedData": nil, "taskToken": "cb-1"})
		foldRoundTrip(t, projector.KindTask, a)
	}
	_, items, _ := foldOne(t, expired)
	foldWant(t, items[0].Item, map[string]any{"status": "expired", "createdAt": "2026-01-05T11:00:00.000Z", "executionId": "1e2d3c4b-5a69-4788-9aab-bccddeeff001"})
}
