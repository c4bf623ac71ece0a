package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// TestEmitTooLargeIsARejection: an event whose item would stay above
// DynamoDB's 400 KB item limit even compressed is a rejected line naming the
// sizes and the limit (exit 1), not a failed write (exit 3, before
// compression and the size check); a 590 KB job that compresses is stored
// and reads back unchanged through `events list`.
func TestEmitTooLargeIsARejection(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	env := localEnv(n)
	raw, err := os.ReadFile("../../ingest/testdata/github/workflow_job_completed.json")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) json.RawMessage {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	steps := edit(func(m map[string]any) {
		var s []any
		for i := 1; i <= 3200; i++ {
			s = append(s, map[string]any{"name": fmt.Sprintf("Run ./scripts/test-shard.sh %d of 3200", i), "status": "completed",
				"conclusion": "success", "number": i, "started_at": "2025-01-15T10:00:25Z", "completed_at": "2025-01-15T10:00:27Z"})
		}
		m["workflow_job"].(map[string]any)["steps"] = s
	})
	rnd := make([]byte, 450<<10)
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	noise := edit(func(m map[string]any) {
		m["enterprise"] = map[string]any{"description": base64.StdEncoding.EncodeToString(rnd)}
	})
	delivery := func(id string, body json.RawMessage) string {
		b, _ := json.Marshal(map[string]any{"headers": map[string]string{"X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": id}, "body": body})
		return string(b) + "\n"
	}
	in := delivery("d-steps", steps) + delivery("d-noise", noise)
	code, out, errOut := runCLI(t, env, in, "emit", "--quiet", "-")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d (a line rejected)\nstdout: %s\nstderr: %s", code, exitFailed, out, errOut)
	}
	var sum ingest.EmitSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^ingest: event github/12345/job/31275968012/d-noise is too large to store: its item would be 4[0-9]{5} bytes \(data 622453 bytes, stored compressed\) and DynamoDB's item limit is 409600 bytes \(400 KB\)$`)
	if sum.Accepted != 1 || len(sum.Failed) != 0 || len(sum.Rejected) != 1 || sum.Rejected[0].Line != 2 || !want.MatchString(sum.Rejected[0].Error) {
		t.Fatalf("emit summary %s: want line 1 accepted, line 2 rejected as too large", out)
	}

	code, out, errOut = runCLI(t, env, "", "events", "list", "--json", "github/12345/job/31275968012")
	if code != exitOK {
		t.Fatalf("events list exit %d: %s", code, errOut)
	}
	var listed []schema.Event
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatal(err)
	}
	var got, wantData bytes.Buffer
	if len(listed) != 1 || json.Compact(&got, listed[0].Data) != nil || json.Compact(&wantData, steps) != nil || got.String() != wantData.String() {
		t.Fatalf("events list gave %d events; want the 590 KB job back unchanged", len(listed))
	}
}
