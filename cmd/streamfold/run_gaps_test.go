package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

// TestRunStartingPositionLatest: `run --starting-position latest` skips
// the records already in the stream, says so in a log line with "gap",
// and records a GapLatest; a consumer from trim_horizon projects them,
// notices nothing, and leaves a heartbeat per shard.
func TestRunStartingPositionLatest(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := localEnv(n)
	appendDay(t, c, n, 7, time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	ops := opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}
	since := time.Now().Add(-time.Hour)

	code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive=false", "--json",
		"--starting-position", "latest", "--consumer", "fresh")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	var sum runSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	if sum.Projector.Records != 0 || sum.Projector.Gaps < 1 {
		t.Fatalf("latest: %+v, want no record handed over and a gap", sum.Projector.Stats)
	}
	if !strings.Contains(errOut, "gap: records may have been missed (latest)") || !strings.Contains(errOut, `"consumer":"fresh"`) || !strings.Contains(errOut, `"kind":"latest"`) {
		t.Fatalf("no gap log line on standard error:\n%s", errOut)
	}
	gaps, err := ops.Gaps(context.Background(), since)
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) == 0 || gaps[0].Consumer != "fresh" || gaps[0].Kind != opsrec.GapLatest || gaps[0].FirstSeq == "" || gaps[0].Shard == "" {
		t.Fatalf("gaps %+v, want a GapLatest of fresh", gaps)
	}

	code, out, errOut = runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive=false", "--json")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	sum = runSummary{}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Projector.Records == 0 || sum.Projector.Gaps != 0 {
		t.Fatalf("trim_horizon: %+v, want records and no gap", sum.Projector.Stats)
	}
	beats, err := ops.Progresses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var counted int64
	for _, b := range beats {
		if b.Consumer == "projector" {
			counted += b.Records
			if b.LastSeq == "" || b.Lag < 0 || b.Updated.Before(b.Since) {
				t.Errorf("heartbeat %+v", b)
			}
		}
	}
	if counted == 0 || counted > sum.Projector.Records {
		t.Fatalf("heartbeats %+v count %d records, run handed over %d", beats, counted, sum.Projector.Records)
	}
	if u := sum.Projector.ConsumedCapacity.ByTable[schema.TableCheckpoints]; u.Write == 0 {
		t.Fatalf("checkpoints table: %+v, want the heartbeats' and checkpoints' writes metered", sum.Projector.ConsumedCapacity.ByTable)
	}
}

func TestRunStartingPositionUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--starting-position", "at_timestamp"}, "--starting-position"},
		{[]string{"--heartbeat-interval", "0s"}, "run: --heartbeat-interval: must be positive"},
	} {
		code, _, errOut := runCLI(t, map[string]string{}, "", append([]string{"run"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("run %v: exit %d, %s: want a usage error naming %s", tt.args, code, errOut, tt.want)
		}
	}
}
