package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// startServe runs `streamfold serve` in the background until the returned
// stop is called; it returns the base URL and the server's stderr.
func startServe(t *testing.T, env map[string]string, args ...string) (base string, stderr *testenv.SyncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &testenv.SyncBuffer{}
	e := &cliEnv{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(k string) string { return env[k] }, now: testclock.Now}
	code := make(chan int, 1)
	go func() { code <- run(ctx, e, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	re := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	deadline := time.Now().Add(60 * time.Second)
	for base == "" {
		select {
		case c := <-code:
			cancel()
			t.Fatalf("serve exited early with %d: %s", c, stderr.String())
		default:
		}
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	result := 0
	stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case result = <-code:
			case <-time.After(15 * time.Second):
				t.Fatal("serve did not stop within 15 s of Ctrl-C")
			}
		})
		return result
	}
	t.Cleanup(func() { stop() })
	return base, stderr, stop
}

func httpGet(t *testing.T, url, token string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// The serve tests need no DynamoDB: health, auth, parameter checks and the
// dashboard are answered before any query is sent.
var serveEnv = map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": "http://127.0.0.1:1"}

func TestServeWithToken(t *testing.T) {
	const tok = "serve-test-token-0123456789"
	base, stderr, stop := startServe(t, serveEnv, "--token", tok)
	if strings.Contains(stderr.String(), tok) {
		t.Fatal("a given token is printed")
	}
	checks := []struct {
		path, token string
		status      int
		body        string
	}{
		{"/api/health", "", 200, `"status":"ok"`},
		{"/api/messages?stage=dev", "", 401, `"code":"unauthorized"`},
		{"/api/messages?stage=dev", "wrong-token-wrong-token", 401, `"code":"unauthorized"`},
		{"/api/messages", tok, 400, `"param":"stage"`},
		{"/api/messages?stage=dev&limit=201", tok, 400, `limit: must be at most 200`},
		{"/api/messages?stage=dev&cursor=bm9wZQ", tok, 400, `"code":"bad_cursor"`},
		{"/api/operations", "", 401, `"code":"unauthorized"`},
		{"/api/operations/deadletters?limit=201", tok, 400, `limit: must be between 1 and 200`},
		{"/", "", 200, "<html"},
	}
	for _, c := range checks {
		status, body, _ := httpGet(t, base+c.path, c.token)
		if status != c.status || !strings.Contains(strings.ToLower(body), strings.ToLower(c.body)) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, status, body, c.status, c.body)
		}
	}
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "shutting down") {
		t.Fatalf("no shutdown message: %s", stderr.String())
	}
	if _, err := http.Get(base + "/api/health"); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
}

func TestServeGeneratesToken(t *testing.T) {
	base, stderr, _ := startServe(t, serveEnv)
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/#token=([A-Za-z0-9_-]+)`).FindStringSubmatch(stderr.String())
	if m == nil || m[1] != base || len(m[2]) < 16 {
		t.Fatalf("no dashboard URL with a generated token on stderr: %s", stderr.String())
	}
	if status, body, _ := httpGet(t, base+"/api/messages", m[2]); status != 400 {
		t.Fatalf("the printed token is not accepted: %d %s", status, body)
	}
	if status, _, _ := httpGet(t, base+"/api/messages", ""); status != 401 {
		t.Fatalf("no token: %d", status)
	}
}

func TestServeUsageErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantText string
	}{
		{"help", []string{"serve", "-h"}, exitOK, "Authorization: Bearer TOKEN"},
		{"help names the ingest routes", []string{"serve", "-h"}, exitOK, "POST /webhooks/github, POST /events and POST /eventbridge"},
		{"short ingest token", []string{"serve", "--addr", "127.0.0.1:0", "--ingest-token", "short"}, exitUsage, "serve: --ingest-token: must be at least 16 bytes, got 5"},
		{"short webhook secret", []string{"serve", "--addr", "127.0.0.1:0", "--webhook-secret", "mysecret"}, exitUsage, "serve: --webhook-secret: must be at least 16 bytes (a random string, e.g. openssl rand -hex 20), got 8"},
		{"bad tag file", []string{"serve", "--addr", "127.0.0.1:0", "--sfn-tags", "/nonexistent/tags.json"}, exitUsage, "serve: --sfn-tags: /nonexistent/tags.json"},
		{"short token", []string{"serve", "--addr", "127.0.0.1:0", "--token", "short"}, exitUsage, "serve: --token: must be at least 16 characters"},
		{"short cursor key", []string{"serve", "--addr", "127.0.0.1:0", "--cursor-key", "short"}, exitUsage, "serve: --cursor-key: must be at least 16 bytes"},
		{"page size above 200", []string{"serve", "--addr", "127.0.0.1:0", "--max-page-size", "500"}, exitUsage, "serve: --max-page-size: must be between 0 (default) and 200, got 500"},
		{"bad address", []string{"serve", "--addr", "256.0.0.1:99999"}, exitRuntime, "serve: listen"},
		{"argument", []string{"serve", "now"}, exitUsage, "streamfold serve: unexpected argument now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, serveEnv, "", tt.args...)
			if code != tt.wantCode || !strings.Contains(out+errOut, tt.wantText) {
				t.Fatalf("exit %d (want %d): %s%s", code, tt.wantCode, out, errOut)
			}
		})
	}
}

// httpPost sends body to url with the given headers.
func httpPost(t *testing.T, url string, header map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServeGeneratesIngestSecrets: without --webhook-secret and
// --ingest-token, both are generated and printed, and the printed ones are
// accepted; a given one is not printed.
func TestServeGeneratesIngestSecrets(t *testing.T) {
	base, stderr, _ := startServe(t, serveEnv)
	out := stderr.String()
	if !strings.Contains(out, "streamfold: ingest on "+base+": POST /webhooks/github, POST /events, POST /eventbridge") {
		t.Fatalf("no ingest line on stderr: %s", out)
	}
	tok := regexp.MustCompile(`generated ingest token .*: ([A-Za-z0-9_-]{32})\n`).FindStringSubmatch(out)
	secret := regexp.MustCompile(`generated GitHub webhook secret .*: ([0-9a-f]{40})\n`).FindStringSubmatch(out)
	if tok == nil || secret == nil {
		t.Fatalf("generated secrets not printed: %s", out)
	}
	// An event that is rejected before anything is written: the token was
	// accepted without a store.
	ce := map[string]string{"Content-Type": "application/cloudevents+json", "Authorization": "Bearer " + tok[1]}
	if status, body := httpPost(t, base+"/events", ce, []byte(`{"specversion":"0.3"}`)); status != 400 || !strings.Contains(body, `specversion: must be \"1.0\", got \"0.3\"`) {
		t.Fatalf("printed token: %d %s", status, body)
	}
	ce["Authorization"] = "Bearer not-the-token-at-all"
	if status, _ := httpPost(t, base+"/events", ce, []byte(`{}`)); status != 401 {
		t.Fatalf("wrong token: %d", status)
	}
	ping := []byte(`{"zen":"Design for failure.","hook_id":1}`)
	if status, body := httpPost(t, base+"/webhooks/github", map[string]string{"X-GitHub-Event": "ping", "X-GitHub-Delivery": "p-1", "X-Hub-Signature-256": hubSignature(secret[1], ping)}, ping); status != 200 || !strings.Contains(body, "pong") {
		t.Fatalf("ping signed with the printed secret: %d %s", status, body)
	}

	const given = "given-ingest-token-0123456789"
	_, stderr2, _ := startServe(t, serveEnv, "--ingest-token", given, "--webhook-secret", "given-webhook-secret")
	if o := stderr2.String(); strings.Contains(o, given) || strings.Contains(o, "given-webhook-secret") || strings.Contains(o, "generated ingest token") {
		t.Fatalf("given ingest secrets are printed: %s", o)
	}
}

// TestServeWithoutIngest: --ingest=false serves the read side only.
func TestServeWithoutIngest(t *testing.T) {
	base, stderr, _ := startServe(t, serveEnv, "--ingest=false")
	if strings.Contains(stderr.String(), "ingest") {
		t.Fatalf("ingest announced: %s", stderr.String())
	}
	if status, body := httpPost(t, base+"/events", map[string]string{"Content-Type": "application/cloudevents+json"}, []byte(`{}`)); status == 202 || status == 401 || strings.Contains(body, "bearer") {
		t.Fatalf("POST /events served without ingest: %d %s", status, body)
	}
	if status, _, _ := httpGet(t, base+"/api/health", ""); status != 200 {
		t.Fatalf("health: %d", status)
	}
}

func hubSignature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// TestServeIngestOnDynamoDBLocal: through a real listener, with the
// producers' own shapes: a GitHub delivery signed with the real HMAC, a
// CloudEvent in each of the three content modes of the HTTP binding and a
// Step Functions event on /eventbridge are appended to the event table and
// read back from it, beside the read API, which keeps answering.
func TestServeIngestOnDynamoDBLocal(t *testing.T) {
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	const (
		secret = "It's a Secret to Everybody"
		token  = "serve-ingest-token-0123456789"
		apiTok = "serve-api-token-0123456789"
	)
	env := localEnv(n)
	env["GITHUB_WEBHOOK_SECRET"] = secret
	env["STREAMFOLD_INGEST_TOKEN"] = token
	base, stderr, stop := startServe(t, env, "--token", apiTok)

	delivery, err := os.ReadFile("../../ingest/testdata/github/workflow_job_queued.json")
	if err != nil {
		t.Fatal(err)
	}
	running, err := os.ReadFile("../../ingest/testdata/eventbridge/seed002_running.json")
	if err != nil {
		t.Fatal(err)
	}
	var eb map[string]any
	if err := json.Unmarshal(running, &eb); err != nil {
		t.Fatal(err)
	}
	eb["detail"].(map[string]any)["stateMachineTags"] = map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}
	withTags, _ := json.Marshal(eb)

	const msg = "550e8400-e29b-41d4-a716-446655440000"
	bearer := "Bearer " + token
	requests := []struct {
		name       string
		path       string
		header     map[string]string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"GitHub delivery", "/webhooks/github", map[string]string{"Content-Type": "application/json", "X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958", "X-Hub-Signature-256": hubSignature(secret, delivery)},
			string(delivery), 202, `"status":"accepted"`},
		{"GitHub delivery, wrong secret", "/webhooks/github", map[string]string{"Content-Type": "application/json", "X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": "d-2", "X-Hub-Signature-256": hubSignature("another secret", delivery)},
			string(delivery), 401, `signature does not match`},
		{"structured", "/events", map[string]string{"Authorization": bearer, "Content-Type": "application/cloudevents+json; charset=utf-8"},
			`{"specversion":"1.0","type":"rez.message.created","source":"rez_agent/dev","id":"serve-created","time":"2025-10-21T14:30:00Z","data":{"message_id":"` + msg + `","stage":"dev","message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hello"},"correlation_id":"660e9500-f39c-52e5-b827-557766551111"}}`,
			202, `{"status":"accepted","id":"serve-created","subject":"messages/` + msg + `"}`},
		{"binary", "/events", map[string]string{"Authorization": bearer, "Content-Type": "application/json", "ce-specversion": "1.0", "ce-type": "rez.message.queued", "ce-source": "rez_agent/dev", "ce-id": "serve-queued", "ce-time": "2025-10-21T14:30:05Z"},
			`{"message_id":"` + msg + `","stage":"dev"}`, 202, `{"status":"accepted","id":"serve-queued","subject":"messages/` + msg + `"}`},
		{"batched", "/events", map[string]string{"Authorization": bearer, "Content-Type": "application/cloudevents-batch+json"},
			`[{"specversion":"1.0","type":"rez.message.processing","source":"rez_agent/dev","id":"serve-processing","time":"2025-10-21T14:30:10Z","data":{"message_id":"` + msg + `","stage":"dev"}},` +
				`{"specversion":"1.0","type":"rez.message.completed","source":"rez_agent/dev","id":"serve-completed","time":"2025-10-21T14:30:12Z","data":{"message_id":"` + msg + `","stage":"dev"}},` +
				`{"specversion":"1.0","type":"rez.message.failed","source":"rez_agent/dev","id":"serve-bad","time":"2025-10-21T14:30:13Z","data":{"message_id":"` + msg + `","stage":"dev"}}]`,
			207, `{"accepted":2,"duplicates":0,"rejected":1,"tooLarge":0,"conflicts":0,"failed":0,"results":[{"status":"accepted","id":"serve-processing","subject":"messages/` + msg + `"},{"status":"accepted","id":"serve-completed","subject":"messages/` + msg + `"},{"status":"rejected","id":"serve-bad","error":"data.error_message: is required","fields":[{"field":"data.error_message","rule":"is required"}]}]}`},
		{"structured again", "/events", map[string]string{"Authorization": bearer, "Content-Type": "application/cloudevents+json"},
			`{"specversion":"1.0","type":"rez.message.created","source":"rez_agent/dev","id":"serve-created","time":"2025-10-21T14:30:00Z","data":{"message_id":"` + msg + `","stage":"dev","message_type":"scheduled_hello","created_by":"scheduler","payload":{"text":"hello"},"correlation_id":"660e9500-f39c-52e5-b827-557766551111"}}`,
			200, `"status":"duplicate"`},
		{"Step Functions event", "/eventbridge", map[string]string{"Authorization": bearer, "Content-Type": "application/json"}, string(withTags),
			202, `"subject":"states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"`},
	}
	for _, r := range requests {
		status, body := httpPost(t, base+r.path, r.header, []byte(r.body))
		if status != r.wantStatus || !strings.Contains(body, r.wantBody) {
			t.Errorf("%s: POST %s: %d %s, want %d with %s", r.name, r.path, status, body, r.wantStatus, r.wantBody)
		}
	}
	if status, body, _ := httpGet(t, base+"/api/messages?stage=dev", apiTok); status != 200 {
		t.Errorf("the read API beside the ingest routes: %d %s", status, body)
	}
	if status, body, _ := httpGet(t, base+"/", ""); status != 200 || !strings.Contains(strings.ToLower(body), "<html") {
		t.Errorf("the dashboard beside the ingest routes: %d", status)
	}

	read := func(subject string) map[string]schema.Event {
		t.Helper()
		out, err := c.DynamoDB.Query(context.Background(), &dynamodb.QueryInput{
			TableName:                 aws.String(n.Table(schema.TableEvents)),
			KeyConditionExpression:    aws.String("#s = :s"),
			ExpressionAttributeNames:  map[string]string{"#s": schema.AttrSubject},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: subject}},
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil {
			t.Fatal(err)
		}
		evs := map[string]schema.Event{}
		for _, it := range out.Items {
			e, err := schema.EventFromItem(it)
			if err != nil {
				t.Fatal(err)
			}
			evs[e.ID] = e
		}
		return evs
	}
	job := read("github/12345/job/31275968012")
	if e, ok := job["72d3162e-cc78-11e3-81ab-4c9367dc0958"]; len(job) != 1 || !ok || e.Type != schema.TypeJobQueued || !bytes.Equal(e.Data, delivery) {
		t.Errorf("job events %v: want the delivery, data byte for byte", job)
	}
	msgs := read("messages/" + msg)
	for id, typ := range map[string]string{"serve-created": schema.TypeMessageCreated, "serve-queued": schema.TypeMessageQueued, "serve-processing": schema.TypeMessageProcessing, "serve-completed": schema.TypeMessageCompleted} {
		if e, ok := msgs[id]; !ok || e.Type != typ || e.Source != "rez_agent/dev" || e.RecordedAt == nil {
			t.Errorf("message event %s: %+v, want type %s", id, e, typ)
		}
	}
	if len(msgs) != 4 {
		t.Errorf("%d message events, want 4 (the rejected one not written)", len(msgs))
	}
	exec := read("states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123")
	if e, ok := exec["6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01"]; len(exec) != 1 || !ok || !strings.Contains(string(e.Data), `"stateMachineTags":{"Application":"StepFunctionsAgent","Type":"Agent"}`) {
		t.Errorf("execution events %v", exec)
	}
	if code := stop(); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
