package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// TestRealSendersProjected is issue 11's acceptance as a new user would
// check it, on DynamoDB Local with TTL on: `streamfold serve` takes what
// real senders send — a GitHub queued delivery of a job that already
// waits for a deployment's approval (signed with the real HMAC), the
// older GitHub Enterprise Server shapes (no created_at, no run_attempt,
// the action "started"), a Step Functions execution redriven after it
// failed (its events delivered out of order across attempts) and a
// CloudEvent dated last year — then `streamfold run` projects the stream
// and `streamfold query` reads the result.
func TestRealSendersProjected(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	const (
		secret = "It's a Secret to Everybody"
		token  = "senders-ingest-token-0123456789"
	)
	env := localEnv(n)
	env["GITHUB_WEBHOOK_SECRET"] = secret
	env["STREAMFOLD_INGEST_TOKEN"] = token
	base, stderr, stop := startServe(t, env, "--token", "senders-api-token-0123456789")

	read := func(path string) []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	github := func(name, event, delivery string, body []byte) {
		t.Helper()
		status, out := httpPost(t, base+"/webhooks/github", map[string]string{"Content-Type": "application/json",
			"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": hubSignature(secret, body)}, body)
		if status != 202 {
			t.Fatalf("%s: %d %s", name, status, out)
		}
	}
	github("queued, already waiting", "workflow_job", "5a8e7c20-0001-11ef-8000-000000000001", read("testdata/senders/workflow_job_queued_waiting.json"))
	for i, f := range []string{"workflow_job_started.json", "workflow_job_queued.json"} { // in_progress before queued
		github("GHES "+f, "workflow_job", "5a8e7c20-0002-11ef-8000-00000000000"+string(rune('1'+i)), read("../../ingest/testdata/github_ghes/"+f))
	}
	// The redriven execution, attempt 1's RUNNING first, attempt 0's
	// FAILED and RUNNING after it.
	for _, f := range []string{"redrive_attempt1_running.json", "execution_failed_full.json", "redrive_attempt0_running.json"} {
		var ev map[string]any
		if err := json.Unmarshal(read("../../ingest/testdata/eventbridge/"+f), &ev); err != nil {
			t.Fatal(err)
		}
		ev["detail"].(map[string]any)["stateMachineTags"] = map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}
		body, _ := json.Marshal(ev)
		if status, out := httpPost(t, base+"/eventbridge", map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, body); status != 202 {
			t.Fatalf("%s: %d %s", f, status, out)
		}
	}
	const msg = "0b8f3c2a-5d4e-4f6a-9b7c-8d9e0f1a2b3c"
	if status, out := httpPost(t, base+"/events", map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/cloudevents+json"},
		[]byte(`{"specversion":"1.0","type":"rez.message.created","source":"rez_agent/dev","id":"backfill-1","time":"2025-06-01T08:00:00Z","data":{"message_id":"`+msg+`","stage":"dev","message_type":"scheduled_hello","created_by":"backfill","payload":{"text":"hello"},"correlation_id":"660e9500-f39c-52e5-b827-557766551111"}}`)); status != 202 {
		t.Fatalf("CloudEvent: %d %s", status, out)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}

	if code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--archive=false", "--quiet"); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	query := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := runCLI(t, env, "", append(append([]string{"query"}, args...), "--json")...)
		if code != exitOK {
			t.Fatalf("query %v: exit %d\n%s%s", args, code, out, errOut)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("query %v: %v\n%s", args, err, out)
		}
		return v
	}
	field := func(v map[string]any, path ...string) any {
		var cur any = v
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[p]
		}
		return cur
	}

	// The job waiting for approval, and its run, read "waiting".
	job := query("job", "--installation", "12345", "--job", "31275968012")
	if got := field(job, "status"); got != "waiting" {
		t.Errorf("waiting job: status %v, want waiting\n%v", got, job)
	}
	run := query("run", "--installation", "12345", "--run", "11183520977")
	if got := field(run, "run", "status"); got != "waiting" {
		t.Errorf("run whose only job waits: status %v, want waiting\n%v", got, run)
	}
	// The GHES job: in_progress (from "started"), run attempt 1,
	// created_at from its earliest known time.
	ghes := query("job", "--installation", "0", "--job", "289782451")
	if got := field(ghes, "status"); got != "in_progress" {
		t.Errorf("GHES job: status %v, want in_progress\n%v", got, ghes)
	}
	if got := field(ghes, "run_attempt"); got != float64(1) {
		t.Errorf("GHES job: run_attempt %v, want 1", got)
	}
	if got, _ := field(ghes, "created_at").(string); got == "" {
		t.Errorf("GHES job has no created_at\n%v", ghes)
	}
	// The redriven execution runs again, and the status index finds it.
	const arn = "arn:aws:states:us-east-1:123456789012:execution:research-agent-prod:4f1c9b2e-77aa-4b0e-9d1c-0e5a2b3c4d5e"
	ex := query("execution", arn)
	if got, count := field(ex, "status"), field(ex, "redriveCount"); got != "RUNNING" || count != float64(1) {
		t.Errorf("redriven execution: status %v redriveCount %v, want RUNNING 1\n%v", got, count, ex)
	}
	running := query("executions", "--status", "running", "--from", "2025-09-01T00:00:00Z", "--to", "2025-10-01T00:00:00Z")
	if b, _ := json.Marshal(running); !strings.Contains(string(b), arn) {
		t.Errorf("executions --status RUNNING misses the redriven execution: %s", b)
	}
	// The message dated last year stays for the retention period of its
	// recording.
	m := query("message", msg)
	ttl, _ := field(m, "ttl").(float64)
	if soon := float64(time.Now().AddDate(0, 0, 89).Unix()); ttl < soon {
		t.Errorf("the backfilled message expires at %v, within 89 days of its recording\n%v", ttl, m)
	}
}
