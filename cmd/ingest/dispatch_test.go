package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/functionurl"
	"github.com/streamfold/streamfold/schema"
)

const (
	testSecret  = "it's a secret to everybody"
	agentARN    = "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"
	secretARN   = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:streamfold-dev-github-webhook-AbCdEf"
	deliveryID  = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	contentType = "application/json"
)

// fakeAppender records events and reports Duplicate for a (subject, id) it
// has seen, like ingest.Appender.
type fakeAppender struct {
	mu     sync.Mutex
	events []schema.Event
	seen   map[string]bool
}

func (a *fakeAppender) Append(_ context.Context, evs []schema.Event) (ingest.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	res := ingest.Result{Outcomes: make([]ingest.Outcome, len(evs)), Errors: make([]error, len(evs))}
	for i, e := range evs {
		if err := ingest.Prepare(&e); err != nil {
			res.Outcomes[i], res.Errors[i] = ingest.Rejected, err
			continue
		}
		k := e.Subject + "\x00" + e.ID
		if a.seen[k] {
			res.Outcomes[i] = ingest.Duplicate
			continue
		}
		a.seen[k] = true
		a.events = append(a.events, e)
		res.Outcomes[i] = ingest.Accepted
	}
	return res, nil
}

func (a *fakeAppender) stored() []schema.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]schema.Event(nil), a.events...)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(body []byte) string {
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// newDispatcher wires the dispatcher as main does, with fakes for DynamoDB,
// Secrets Manager and the Step Functions tags.
func newDispatcher(t *testing.T, app *fakeAppender) *dispatcher {
	t.Helper()
	webhook := &lazyHandler{log: slog.New(slog.DiscardHandler), build: func(ctx context.Context) (http.Handler, error) {
		secret, err := readSecret(ctx, fakeSecrets{value: aws.String(testSecret + "\n")}, secretARN)
		if err != nil {
			return nil, err
		}
		return ingest.NewWebhookHandler(app, ingest.WebhookConfig{Secret: secret}, nil)
	}}
	tags := ingest.StaticTags{agentARN: {"Type": "Agent", "Application": "StepFunctionsAgent"}}
	return &dispatcher{webhook: webhook, sfn: ingest.NewStepFunctionsAdapter(app, tags, nil)}
}

// urlRequest is a function URL invocation (payload format 2.0) as Lambda
// sends it: lower-case header names.
func urlRequest(method string, body []byte, headers map[string]string, b64 bool) []byte {
	h := map[string]string{"content-type": contentType, "user-agent": "GitHub-Hookshot/abc123"}
	for k, v := range headers {
		h[k] = v
	}
	ev := events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        "/",
		RawQueryString: "",
		Headers:        h,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID:  "anonymous",
			RequestID:  "c6af9ac6-7b61-11e6-9a41-93e812345678",
			DomainName: "abcdefg.lambda-url.eu-west-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: "/", Protocol: "HTTP/1.1", SourceIP: "192.30.252.1", UserAgent: "GitHub-Hookshot/abc123"},
		},
		Body:            string(body),
		IsBase64Encoded: b64,
	}
	if b64 {
		ev.Body = base64.StdEncoding.EncodeToString(body)
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return raw
}

func TestClassify(t *testing.T) {
	body := readFixture(t, "workflow_job_queued.json")
	tests := []struct {
		name string
		raw  string
		want kind
	}{
		{"function URL request", string(urlRequest("POST", body, nil, false)), kindFunctionURL},
		{"EventBridge Step Functions event", string(readFixture(t, "seed002_running.json")), kindEventBridge},
		{"EventBridge event of another source", `{"source":"aws.ec2","detail-type":"EC2 Instance State-change Notification","detail":{}}`, kindEventBridge},
		{"empty object", `{}`, kindUnknown},
		{"requestContext without http", `{"requestContext":{"accountId":"1"}}`, kindUnknown},
		{"source without detail-type", `{"source":"aws.states"}`, kindUnknown},
		{"not JSON", `hello`, kindUnknown},
		{"array", `[1,2]`, kindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify(json.RawMessage(tt.raw)); got != tt.want {
				t.Fatalf("classify = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDispatchWebhook(t *testing.T) {
	body := readFixture(t, "workflow_job_queued.json")
	signed := map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign(body)}
	// A function URL event whose body claims base64 but is not.
	var notBase64 events.LambdaFunctionURLRequest
	if err := json.Unmarshal(urlRequest("POST", body, signed, false), &notBase64); err != nil {
		t.Fatal(err)
	}
	notBase64.Body, notBase64.IsBase64Encoded = "%%%", true
	notBase64Raw, err := json.Marshal(notBase64)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		raw        []byte
		wantStatus int
		wantBody   map[string]string
		wantStored int // events in the appender afterwards
	}{
		{"signed delivery", urlRequest("POST", body, signed, false), 202, map[string]string{"status": "accepted"}, 1},
		{"base64 body", urlRequest("POST", body, signed, true), 200, map[string]string{"status": "duplicate"}, 1},
		{"wrong signature", urlRequest("POST", body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign([]byte("other"))}, false),
			401, map[string]string{"error": "signature does not match"}, 1},
		{"no signature", urlRequest("POST", body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID}, false),
			401, map[string]string{"error": "missing X-Hub-Signature-256 header"}, 1},
		{"GET", urlRequest("GET", nil, nil, false), 405, map[string]string{"error": "method GET not allowed; use POST"}, 1},
		{"ping", urlRequest("POST", []byte(`{"zen":"Keep it logically awesome."}`), map[string]string{"x-github-event": "ping", "x-github-delivery": "p1", "x-hub-signature-256": sign([]byte(`{"zen":"Keep it logically awesome."}`))}, false),
			200, map[string]string{"status": "pong"}, 1},
		{"body not base64", notBase64Raw, 400,
			map[string]string{"error": "functionurl: malformed request event: body: not base64: illegal base64 data at input byte 0"}, 1},
	}
	app := &fakeAppender{}
	d := newDispatcher(t, app)
	for _, tt := range tests { // in order: the second case is a redelivery of the first
		t.Run(tt.name, func(t *testing.T) {
			out, err := d.Handle(context.Background(), tt.raw)
			if err != nil {
				t.Fatalf("Handle: %v (a webhook invocation must never fail)", err)
			}
			resp, ok := out.(events.LambdaFunctionURLResponse)
			if !ok {
				t.Fatalf("Handle returned %T, want events.LambdaFunctionURLResponse", out)
			}
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.wantStatus, resp.Body)
			}
			if got := resp.Headers["Content-Type"]; got != contentType {
				t.Errorf("Content-Type %q, want %q", got, contentType)
			}
			var got map[string]string
			if err := json.Unmarshal([]byte(resp.Body), &got); err != nil {
				t.Fatalf("body %q: %v", resp.Body, err)
			}
			for k, v := range tt.wantBody {
				if got[k] != v {
					t.Errorf("body[%s] = %q, want %q (body %s)", k, got[k], v, resp.Body)
				}
			}
			if n := len(app.stored()); n != tt.wantStored {
				t.Errorf("appender holds %d events, want %d", n, tt.wantStored)
			}
		})
	}
	ev := app.stored()[0]
	if ev.ID != deliveryID || ev.Type != schema.TypeJobQueued || ev.Subject != "github/12345/job/31275968012" || string(ev.Data) != string(body) {
		t.Errorf("stored event id %q type %q subject %q, data equal to the delivery: %v", ev.ID, ev.Type, ev.Subject, string(ev.Data) == string(body))
	}
}

func TestDispatchStepFunctions(t *testing.T) {
	running := readFixture(t, "seed002_running.json")
	var other map[string]any
	if err := json.Unmarshal(running, &other); err != nil {
		t.Fatal(err)
	}
	other["id"] = "non-agent-1"
	other["detail"].(map[string]any)["stateMachineArn"] = "arn:aws:states:us-west-2:123:stateMachine:nightly-etl"
	nonAgent, _ := json.Marshal(other)

	app := &fakeAppender{}
	d := newDispatcher(t, app)
	tests := []struct {
		name string
		raw  []byte
		want ingest.AdapterOutcome
	}{
		{"agent execution", running, ingest.Appended},
		{"redelivery", running, ingest.AlreadyAppended},
		{"non-agent execution", nonAgent, ingest.Skipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := d.Handle(context.Background(), tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := out.(stepFunctionsResult); !ok || got.Outcome != tt.want {
				t.Fatalf("Handle = %#v, want outcome %s", out, tt.want)
			}
			// What Lambda serialises as the invocation result.
			b, _ := json.Marshal(out)
			if want := `{"outcome":"` + tt.want.String() + `"}`; string(b) != want {
				t.Errorf("result JSON %s, want %s", b, want)
			}
		})
	}
	evs := app.stored()
	if len(evs) != 1 || evs[0].Type != schema.TypeExecutionStatusChange {
		t.Fatalf("stored %d events (%v), want the agent execution only", len(evs), evs)
	}

	// A Step Functions event that fails validation is a permanent error,
	// returned so that Lambda routes it to the on-failure destination.
	bad := strings.Replace(string(running), `"status": "RUNNING"`, `"status": "EXPLODED"`, 1)
	bad = strings.Replace(bad, "6f2b0c1e", "7f2b0c1e", 1)
	_, err := d.Handle(context.Background(), json.RawMessage(bad))
	var p interface{ Permanent() bool }
	if err == nil || !errors.As(err, &p) || !p.Permanent() {
		t.Fatalf("invalid status: err = %v, want a permanent error", err)
	}
}

func TestDispatchUnrecognized(t *testing.T) {
	d := newDispatcher(t, &fakeAppender{})
	for _, raw := range []string{`{}`, `{"Records":[{"eventSource":"aws:sqs"}]}`, `"x"`} {
		if _, err := d.Handle(context.Background(), json.RawMessage(raw)); !errors.Is(err, ErrUnrecognizedEvent) {
			t.Errorf("Handle(%s) = %v, want ErrUnrecognizedEvent", raw, err)
		}
	}
}

// fakeSecrets is a secretGetter with one value (or error); it counts calls.
type fakeSecrets struct {
	value  *string
	binary []byte
	err    error
	calls  *int
}

func (f fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	if f.calls != nil {
		*f.calls++
	}
	if f.err != nil {
		return nil, f.err
	}
	return &secretsmanager.GetSecretValueOutput{ARN: in.SecretId, SecretString: f.value, SecretBinary: f.binary}, nil
}

func TestReadSecret(t *testing.T) {
	boom := errors.New("AccessDeniedException")
	tests := []struct {
		name    string
		api     fakeSecrets
		want    string
		wantErr error
	}{
		{"string with newline", fakeSecrets{value: aws.String("  s3cret\n")}, "s3cret", nil},
		{"binary", fakeSecrets{binary: []byte("bin")}, "bin", nil},
		{"empty string", fakeSecrets{value: aws.String("\n")}, "", ErrEmptySecret},
		{"no value", fakeSecrets{}, "", ErrEmptySecret},
		{"api error", fakeSecrets{err: boom}, "", boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readSecret(context.Background(), tt.api, secretARN)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), secretARN) {
				t.Errorf("error %q does not name the secret", err)
			}
			if string(got) != tt.want {
				t.Fatalf("secret %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLazyHandlerRetries: while the secret cannot be read, webhook requests
// get 503 and the next request tries again; once built, the handler is kept.
func TestLazyHandlerRetries(t *testing.T) {
	calls := 0
	api := fakeSecrets{value: aws.String(""), calls: &calls}
	app := &fakeAppender{}
	l := &lazyHandler{log: slog.New(slog.DiscardHandler), build: func(ctx context.Context) (http.Handler, error) {
		secret, err := readSecret(ctx, api, secretARN)
		if err != nil {
			return nil, err
		}
		return ingest.NewWebhookHandler(app, ingest.WebhookConfig{Secret: secret}, nil)
	}}
	body := readFixture(t, "workflow_job_queued.json")
	var req events.LambdaFunctionURLRequest
	if err := json.Unmarshal(urlRequest("POST", body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign(body)}, false), &req); err != nil {
		t.Fatal(err)
	}
	serve := func() int {
		return functionurl.Serve(context.Background(), l, req, writeBadEvent).StatusCode
	}
	if got := serve(); got != http.StatusServiceUnavailable {
		t.Fatalf("secret empty: status %d, want 503", got)
	}
	*api.value = testSecret // set out of band after the deploy
	if got := serve(); got != http.StatusAccepted {
		t.Fatalf("secret set: status %d, want 202", got)
	}
	if got := serve(); got != http.StatusOK { // duplicate
		t.Fatalf("redelivery: status %d, want 200", got)
	}
	if calls != 2 {
		t.Fatalf("GetSecretValue called %d times, want 2 (failed read, then kept)", calls)
	}
}

func TestConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"ok", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": secretARN, "STREAMFOLD_STAGE": "prod"}, ""},
		{"no secret", map[string]string{}, "ingest: GITHUB_WEBHOOK_SECRET_ARN: is required (the Secrets Manager secret holding the GitHub webhook secret)"},
		{"not an ARN", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": "my-secret"}, `ingest: GITHUB_WEBHOOK_SECRET_ARN: must be a Secrets Manager ARN (arn:...:secretsmanager:...), got "my-secret"`},
		{"bad stage", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": secretARN, "STREAMFOLD_STAGE": "qa"}, `schema: Naming.Stage: must be one of dev, stage, prod, got "qa"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := configFromEnv(env(tt.env))
			err := c.Validate()
			if got := ""; err != nil {
				got = err.Error()
				if got != tt.want {
					t.Fatalf("Validate() = %q, want %q", got, tt.want)
				}
			} else if tt.want != "" {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if err == nil && c.Naming.Table(schema.TableEvents) != "streamfold-"+tt.env["STREAMFOLD_STAGE"]+"-events" {
				t.Errorf("events table %q", c.Naming.Table(schema.TableEvents))
			}
		})
	}
}
