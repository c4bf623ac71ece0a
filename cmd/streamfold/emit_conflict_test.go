package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

const emitMessageFailed = `{"specversion":"1.0","type":"rez.message.failed","source":"rez_agent/dev","id":"%s","time":"%s","data":{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","error_message":"%s"}}`

// TestEmitConflictDynamoDBLocal: emit counts a line whose id is stored with
// other content under "conflicts" and exits 4 (exitConflict), writes
// nothing for it, and `deadletter list --consumer ingest` shows the
// conflict with both versions; the same content again is a duplicate.
func TestEmitConflictDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := localEnv(n)
	at := "2025-10-21T14:30:15Z"
	first := fmt.Sprintf(emitMessageFailed, "c-1", at, "boom")
	if code, out, errOut := runCLI(t, env, first+"\n", "emit", "--quiet", "-"); code != exitOK {
		t.Fatalf("first emit exit %d\n%s\n%s", code, out, errOut)
	}
	again := first + "\n" + fmt.Sprintf(emitMessageFailed, "c-1", at, "a different failure") + "\n"
	code, out, errOut := runCLI(t, env, again, "emit", "--quiet", "-")
	if code != exitConflict || !strings.Contains(errOut, "1 lines conflict") {
		t.Fatalf("second emit exit %d, want %d\n%s\n%s", code, exitConflict, out, errOut)
	}
	var sum ingest.EmitSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Accepted != 0 || sum.Duplicates != 1 || len(sum.Conflicts) != 1 || sum.Conflicts[0].Line != 2 || !strings.Contains(sum.Conflicts[0].Error, "conflicts with the stored event") {
		t.Fatalf("summary %s", out)
	}
	code, out, errOut = runCLI(t, env, "", "deadletter", "list", "--consumer", "ingest", "--json")
	if code != exitOK {
		t.Fatalf("deadletter list exit %d\n%s", code, errOut)
	}
	var letters []deadletter.Letter
	if err := json.Unmarshal([]byte(out), &letters); err != nil || len(letters) != 1 {
		t.Fatalf("deadletter list: %v\n%s", err, out)
	}
	d := letters[0]
	rec, err := ingest.ParseConflictDeadLetter(d.Record)
	if err != nil || d.Reason != ingest.ReasonConflict || d.EventID != "c-1" ||
		!strings.Contains(string(rec.Stored.Data), "boom") || !strings.Contains(string(rec.New.Data), "a different failure") {
		t.Fatalf("dead letter %+v (%v)", d, err)
	}
}

// TestEmitFutureTimeDynamoDBLocal: a line dated more than --max-future-skew
// after now is rejected naming "time" and the limit. The times are taken
// from the wall clock on purpose: emit stamps recordedat with it.
const envMaxFutureSkew = "STREAMFOLD_MAX_FUTURE_SKEW"

func TestEmitFutureTimeDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := localEnv(n)
	now := time.Now().UTC()
	in := fmt.Sprintf(emitMessageFailed, "f-25h", now.Add(25*time.Hour).Format(time.RFC3339), "x") + "\n" +
		fmt.Sprintf(emitMessageFailed, "f-23h", now.Add(23*time.Hour).Format(time.RFC3339), "x") + "\n"
	code, out, errOut := runCLI(t, env, in, "emit", "--quiet", "-")
	var sum ingest.EmitSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if code != exitFailed || sum.Accepted != 1 || len(sum.Rejected) != 1 || sum.Rejected[0].Line != 1 ||
		!strings.HasPrefix(sum.Rejected[0].Error, "time: is 2") || !strings.Contains(sum.Rejected[0].Error, "ahead of recordedat") || !strings.Contains(sum.Rejected[0].Error, "at most 24h0m0s ahead") {
		t.Fatalf("exit %d, summary %s", code, out)
	}
	// A larger skew takes it; a bad one is a usage error naming the flag.
	code, out, _ = runCLI(t, env, in, "emit", "--quiet", "--max-future-skew", "26h", "-")
	sum = ingest.EmitSummary{}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != exitOK || sum.Accepted != 1 || sum.Duplicates != 1 {
		t.Fatalf("--max-future-skew 26h: exit %d\n%s", code, out)
	}
	env[envMaxFutureSkew] = "tomorrow"
	if code, _, errOut := runCLI(t, env, in, "emit", "--quiet", "-"); code != exitUsage || !strings.Contains(errOut, envMaxFutureSkew+`="tomorrow" (from the environment): expected duration`) {
		t.Fatalf("bad %s: exit %d\n%s", envMaxFutureSkew, code, errOut)
	}
}
