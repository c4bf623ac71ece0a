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
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

const (
	testSecret   = "it's a secret to everybody"
	testToken    = "lambda-ingest-token-0123456789"
	agentARN     = "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"
	webhookARN   = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:streamfold-dev/github-webhook-secret-AbCdEf"
	tokenARN     = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:streamfold-dev/ingest-token-GhIjKl"
	deliveryID   = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	contentType  = "application/json"
	quarantineAt = "2026-01-02T03:04:05Z"
)

// fakeAppender records events and reports Duplicate for a (subject, id) it
// has seen, like ingest.Appender; err, when set, fails every append.
type fakeAppender struct {
	mu     sync.Mutex
	events []schema.Event
	seen   map[string]bool
	err    error
	// conflict makes every event a Conflict (the appender dead-letters it).
	conflict bool
}

func (a *fakeAppender) Append(_ context.Context, evs []schema.Event) (ingest.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	res := ingest.Result{Outcomes: make([]ingest.Outcome, len(evs)), Errors: make([]error, len(evs))}
	for i, e := range evs {
		if a.err != nil {
			res.Outcomes[i], res.Errors[i] = ingest.Failed, a.err
			continue
		}
		if a.conflict {
			res.Outcomes[i], res.Errors[i] = ingest.Conflict, &ingest.ConflictError{Subject: "s", ID: e.ID, StoredHash: "sha256:a", NewHash: "sha256:b"}
			continue
		}
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
	if a.err != nil {
		return res, a.err
	}
	return res, nil
}

func (a *fakeAppender) stored() []schema.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]schema.Event(nil), a.events...)
}

// fakeDeadLetters records dead letters by key, as the table would.
type fakeDeadLetters struct {
	mu  sync.Mutex
	put map[string]deadletter.Letter
	err error
}

func (f *fakeDeadLetters) Put(_ context.Context, d deadletter.Letter) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if f.put == nil {
		f.put = map[string]deadletter.Letter{}
	}
	f.put[d.Consumer+"/"+d.Position] = d
	return nil
}

func (f *fakeDeadLetters) all() []deadletter.Letter {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []deadletter.Letter
	for _, d := range f.put {
		out = append(out, d)
	}
	return out
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

func fixedNow() time.Time {
	t, _ := time.Parse(time.RFC3339, quarantineAt)
	return t
}

// newDispatcher wires the dispatcher as main does, with fakes for DynamoDB,
// Secrets Manager, the Step Functions tags and the dead letters.
func newDispatcher(t *testing.T, app ingest.EventAppender, tags ingest.TagSource, dl deadLetterPutter) *dispatcher {
	t.Helper()
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{
		Appender:          app,
		WebhookSecret:     &cachedSecret{api: fakeSecrets{value: aws.String(testSecret + "\n")}, arn: webhookARN},
		Token:             &cachedSecret{api: fakeSecrets{value: aws.String(testToken)}, arn: tokenARN},
		StepFunctionsTags: tags,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &dispatcher{http: h, sfn: &stepFunctions{appender: app, tags: tags, deadLetters: dl, log: slog.New(slog.DiscardHandler), now: fixedNow}}
}

var agentTags = ingest.StaticTags{agentARN: {"Type": "Agent", "Application": "StepFunctionsAgent"}}

// urlRequest is a function URL invocation (payload format 2.0) as Lambda
// sends it: lower-case header names.
func urlRequest(method, path string, body []byte, headers map[string]string, b64 bool) []byte {
	h := map[string]string{"content-type": contentType, "user-agent": "GitHub-Hookshot/abc123"}
	for k, v := range headers {
		h[k] = v
	}
	ev := events.LambdaFunctionURLRequest{
		Version:        "2.0",
		RawPath:        path,
		RawQueryString: "",
		Headers:        h,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID:  "anonymous",
			RequestID:  "c6af9ac6-7b61-11e6-9a41-93e812345678",
			DomainName: "abcdefg.lambda-url.eu-west-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "192.30.252.1", UserAgent: "GitHub-Hookshot/abc123"},
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
		{"function URL request", string(urlRequest("POST", ingest.PathGitHubWebhook, body, nil, false)), kindFunctionURL},
		{"function URL request fixture", string(readFixture(t, "function_url_events_binary.json")), kindFunctionURL},
		{"EventBridge Step Functions event", string(readFixture(t, "seed002_running.json")), kindEventBridge},
		{"EventBridge event of another source", string(readFixture(t, "eventbridge_ec2_state_change.json")), kindEventBridge},
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

// TestDispatchHTTP: function URL requests reach the ingest routes by path,
// in order (later cases see what earlier ones appended), and the
// invocation never fails.
func TestDispatchHTTP(t *testing.T) {
	body := readFixture(t, "workflow_job_queued.json")
	signed := map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign(body)}
	// A function URL event whose body claims base64 but is not.
	var notBase64 events.LambdaFunctionURLRequest
	if err := json.Unmarshal(urlRequest("POST", ingest.PathGitHubWebhook, body, signed, false), &notBase64); err != nil {
		t.Fatal(err)
	}
	notBase64.Body, notBase64.IsBase64Encoded = "%%%", true
	notBase64Raw, err := json.Marshal(notBase64)
	if err != nil {
		t.Fatal(err)
	}
	ping := []byte(`{"zen":"Keep it logically awesome."}`)
	tests := []struct {
		name       string
		raw        []byte
		wantStatus int
		wantBody   string // a substring of the response body
		wantStored int    // events in the appender afterwards
	}{
		{"signed delivery", urlRequest("POST", ingest.PathGitHubWebhook, body, signed, false), 202, `"status":"accepted"`, 1},
		{"base64 body", urlRequest("POST", ingest.PathGitHubWebhook, body, signed, true), 200, `"status":"duplicate"`, 1},
		{"wrong signature", urlRequest("POST", ingest.PathGitHubWebhook, body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign([]byte("other"))}, false),
			401, `{"error":"signature does not match"}`, 1},
		{"no signature", urlRequest("POST", ingest.PathGitHubWebhook, body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID}, false),
			401, `{"error":"missing X-Hub-Signature-256 header"}`, 1},
		{"GET", urlRequest("GET", ingest.PathGitHubWebhook, nil, nil, false), 405, `{"error":"method GET not allowed; use POST"}`, 1},
		{"ping", urlRequest("POST", ingest.PathGitHubWebhook, ping, map[string]string{"x-github-event": "ping", "x-github-delivery": "p1", "x-hub-signature-256": sign(ping)}, false),
			200, `"status":"pong"`, 1},
		{"the root is no route", urlRequest("POST", "/", body, signed, false), 404,
			`{"error":"no such route: /; the ingest routes are POST /webhooks/github, POST /events, POST /eventbridge"}`, 1},
		{"body not base64", notBase64Raw, 400,
			`{"error":"functionurl: malformed request event: body: not base64: illegal base64 data at input byte 0"}`, 1},
		{"CloudEvent in binary mode", readFixture(t, "function_url_events_binary.json"), 202,
			`{"status":"accepted","id":"seed004-failed","subject":"messages/550e8400-e29b-41d4-a716-446655440000"}`, 2},
		{"CloudEvents batch, base64 body", readFixture(t, "function_url_events_batch_base64.json"), 207,
			`{"status":"rejected","id":"seed004-queued","error":"data.stage: must be one of dev, stage, prod, got \"qa\"","fields":[{"field":"data.stage","rule":"must be one of dev, stage, prod, got \"qa\""}]}`, 3},
		{"CloudEvent without the token", urlRequest("POST", ingest.PathEvents, []byte(`{}`), map[string]string{"content-type": ingest.MediaTypeCloudEvent}, false), 401,
			`{"error":"a bearer token is required: Authorization: Bearer <token>"}`, 3},
		{"Step Functions event posted", readFixture(t, "function_url_eventbridge.json"), 202,
			`"subject":"states/execution/arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"`, 4},
	}
	app := &fakeAppender{}
	d := newDispatcher(t, app, agentTags, &fakeDeadLetters{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := d.Handle(context.Background(), tt.raw)
			if err != nil {
				t.Fatalf("Handle: %v (a function URL invocation must never fail)", err)
			}
			resp, ok := out.(events.LambdaFunctionURLResponse)
			if !ok {
				t.Fatalf("Handle returned %T, want events.LambdaFunctionURLResponse", out)
			}
			if resp.StatusCode != tt.wantStatus || !strings.Contains(resp.Body, tt.wantBody) {
				t.Fatalf("%d %s, want %d with %s", resp.StatusCode, resp.Body, tt.wantStatus, tt.wantBody)
			}
			if got := resp.Headers["Content-Type"]; got != contentType {
				t.Errorf("Content-Type %q, want %q", got, contentType)
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

// fakeLister is a TagLister that returns err, or the agent tags.
type fakeLister struct{ err error }

func (f fakeLister) ListTagsForResource(_ context.Context, in *sfn.ListTagsForResourceInput, _ ...func(*sfn.Options)) (*sfn.ListTagsForResourceOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &sfn.ListTagsForResourceOutput{Tags: []sfntypes.Tag{{Key: aws.String("Type"), Value: aws.String("Agent")}, {Key: aws.String("Application"), Value: aws.String("StepFunctionsAgent")}}}, nil
}

// TestDispatchStepFunctions: an EventBridge invocation returns the
// adapter's outcome; an event that can never be appended is dead-lettered
// with its reason, the error, the event byte for byte and the tags found,
// and the invocation succeeds; a transient failure, or a dead letter that
// cannot be written, fails the invocation so that Lambda retries it.
func TestDispatchStepFunctions(t *testing.T) {
	running := readFixture(t, "seed002_running.json")
	var other map[string]any
	if err := json.Unmarshal(running, &other); err != nil {
		t.Fatal(err)
	}
	other["id"] = "non-agent-1"
	other["detail"].(map[string]any)["stateMachineArn"] = "arn:aws:states:us-west-2:123:stateMachine:nightly-etl"
	nonAgent, _ := json.Marshal(other)
	noStopDate := readFixture(t, "eventbridge_succeeded_without_stopdate.json")
	ec2 := readFixture(t, "eventbridge_ec2_state_change.json")
	badTime := readFixture(t, "eventbridge_malformed_time.json")
	notFound := ingest.NewTagCache(fakeLister{err: &sfntypes.ResourceNotFound{Message: aws.String("State Machine Does Not Exist")}}, 0, nil)
	throttled := ingest.NewTagCache(fakeLister{err: errors.New("ThrottlingException: Rate exceeded")}, 0, nil)

	tests := []struct {
		name       string
		raw        []byte
		tags       ingest.TagSource
		appendErr  error
		conflict   bool
		dlErr      error
		want       stepFunctionsResult
		wantErr    string // the invocation error, "" for none
		wantLetter string // the dead letter's position, "" for none
		wantTags   string // the dead letter's stateMachineTags as JSON
	}{
		{name: "agent execution", raw: running, tags: agentTags, want: stepFunctionsResult{Outcome: "appended"}},
		{name: "non-agent execution", raw: nonAgent, tags: agentTags, want: stepFunctionsResult{Outcome: "skipped"}},
		{name: "fails validation", raw: noStopDate, tags: agentTags,
			want:       stepFunctionsResult{Outcome: "dead_lettered", Reason: "invalid", Error: "ingest: step functions event 0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8: data.stopDate: is required when status is SUCCEEDED"},
			wantLetter: "2009-02-13T23:31:40Z#0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8", wantTags: `{"Application":"StepFunctionsAgent","Type":"Agent"}`},
		{name: "not a Step Functions event", raw: ec2, tags: agentTags,
			want:       stepFunctionsResult{Outcome: "dead_lettered", Reason: "not-step-functions", Error: `ingest: not a Step Functions execution status change: source "aws.ec2", detail-type "EC2 Instance State-change Notification"`},
			wantLetter: "2015-11-11T21:29:54Z#7bf73129-1428-4cd3-a780-95db273d1602", wantTags: `null`},
		{name: "time not RFC 3339", raw: badTime, tags: agentTags,
			want:       stepFunctionsResult{Outcome: "dead_lettered", Reason: "malformed", Error: `ingest: EventBridge event: parsing time "13/Feb/2009:23:31:30 +0000" as "2006-01-02T15:04:05Z07:00": cannot parse "13/Feb/2009:23:31:30 +0000" as "2006"`},
			wantLetter: "0001-01-01T00:00:00Z#malformed-time-1", wantTags: `null`},
		{name: "state machine deleted", raw: running, tags: notFound,
			want:       stepFunctionsResult{Outcome: "dead_lettered", Reason: "state-machine-not-found", Error: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: tags: ingest: state machine not found: arn:aws:states:us-west-2:123:stateMachine:my-agent-prod: ResourceNotFound: State Machine Does Not Exist"},
			wantLetter: "2009-02-13T23:31:30Z#6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01", wantTags: `null`},
		// The appender keeps a conflict's two versions itself: no second letter.
		{name: "conflict", raw: running, tags: agentTags, conflict: true,
			want: stepFunctionsResult{Outcome: "conflict", Reason: "conflict", Error: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: ingest: event s/6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01 conflicts with the stored event of the same subject and id: its content hash is sha256:b, the stored one's sha256:a; the stored event is kept and this one was not written"}},
		{name: "tag lookup throttled", raw: running, tags: throttled,
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: tags: ingest: list tags of arn:aws:states:us-west-2:123:stateMachine:my-agent-prod: ThrottlingException: Rate exceeded"},
		{name: "append fails", raw: running, tags: agentTags, appendErr: errors.New("ProvisionedThroughputExceededException"),
			wantErr: "ingest: step functions event 6f2b0c1e-9a4d-4c8b-8f3e-2d1a5b7c9e01: append: ProvisionedThroughputExceededException"},
		{name: "dead letter cannot be written", raw: noStopDate, tags: agentTags, dlErr: errors.New("AccessDeniedException"),
			wantErr: "ingest: dead-letter event 0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8 (invalid: ingest: step functions event 0b0a1b2c-3d4e-5f60-7182-93a4b5c6d7e8: data.stopDate: is required when status is SUCCEEDED): AccessDeniedException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &fakeAppender{err: tt.appendErr, conflict: tt.conflict}
			dl := &fakeDeadLetters{err: tt.dlErr}
			d := newDispatcher(t, app, tt.tags, dl)
			out, err := d.Handle(context.Background(), tt.raw)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Handle error = %v, want %q", err, tt.wantErr)
				}
				if n := len(dl.all()); n != 0 {
					t.Fatalf("%d dead letters for a transient failure", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Handle: %v (must not fail)", err)
			}
			if out != tt.want {
				t.Fatalf("result %+v, want %+v", out, tt.want)
			}
			letters := dl.all()
			if tt.wantLetter == "" {
				if len(letters) != 0 {
					t.Fatalf("dead letters %+v, want none", letters)
				}
				return
			}
			if len(letters) != 1 {
				t.Fatalf("%d dead letters, want 1", len(letters))
			}
			l := letters[0]
			if l.Consumer != "ingest" || l.Position != tt.wantLetter || l.Reason != tt.want.Reason || l.Error != tt.want.Error || l.Status != "quarantined" || l.QuarantinedAt.Format(time.RFC3339) != quarantineAt {
				t.Errorf("dead letter %+v", l)
			}
			rec, err := ingest.ParseStepFunctionsDeadLetter(l.Record)
			if err != nil {
				t.Fatal(err)
			}
			if string(rec.Event) != strings.TrimSpace(string(tt.raw)) {
				t.Errorf("dead letter keeps the event as\n%s\nwant it byte for byte\n%s", rec.Event, tt.raw)
			}
			if tags, _ := json.Marshal(rec.Tags); string(tags) != tt.wantTags {
				t.Errorf("dead letter tags %s, want %s", tags, tt.wantTags)
			}
			// EventBridge redelivers: the same entry, not a second one.
			if _, err := d.Handle(context.Background(), tt.raw); err != nil || len(dl.all()) != 1 {
				t.Fatalf("redelivery: %v, %d dead letters", err, len(dl.all()))
			}
		})
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
			got, err := readSecret(context.Background(), tt.api, webhookARN)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), webhookARN) {
				t.Errorf("error %q does not name the secret", err)
			}
			if string(got) != tt.want {
				t.Fatalf("secret %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSecretsAreReadUntilSet: while a secret cannot be read, its routes get
// 503 and the next request reads again; once read, it is kept. The webhook
// and the token are independent.
func TestSecretsAreReadUntilSet(t *testing.T) {
	hookCalls, tokenCalls := 0, 0
	hookAPI := fakeSecrets{value: aws.String(""), calls: &hookCalls}
	tokenAPI := fakeSecrets{value: aws.String(""), calls: &tokenCalls}
	app := &fakeAppender{}
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{
		Appender:      app,
		WebhookSecret: &cachedSecret{api: hookAPI, arn: webhookARN},
		Token:         &cachedSecret{api: tokenAPI, arn: tokenARN},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &dispatcher{http: h}
	body := readFixture(t, "workflow_job_queued.json")
	hook := urlRequest("POST", ingest.PathGitHubWebhook, body, map[string]string{"x-github-event": "workflow_job", "x-github-delivery": deliveryID, "x-hub-signature-256": sign(body)}, false)
	ce := readFixture(t, "function_url_events_binary.json")
	serve := func(raw []byte) int {
		out, err := d.Handle(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		return out.(events.LambdaFunctionURLResponse).StatusCode
	}
	if got := serve(hook); got != http.StatusServiceUnavailable {
		t.Fatalf("webhook secret empty: status %d, want 503", got)
	}
	if got := serve(ce); got != http.StatusServiceUnavailable {
		t.Fatalf("token empty: status %d, want 503", got)
	}
	*hookAPI.value = testSecret // set out of band after the deploy
	if got := serve(hook); got != http.StatusAccepted {
		t.Fatalf("webhook secret set: status %d, want 202", got)
	}
	if got := serve(ce); got != http.StatusServiceUnavailable {
		t.Fatalf("token still empty: status %d, want 503", got)
	}
	*tokenAPI.value = "short"
	if got := serve(ce); got != http.StatusServiceUnavailable {
		t.Fatalf("token too short: status %d, want 503", got)
	}
	if got := serve(hook); got != http.StatusOK { // duplicate
		t.Fatalf("redelivery: status %d, want 200", got)
	}
	if hookCalls != 2 {
		t.Fatalf("webhook secret read %d times, want 2 (failed read, then kept)", hookCalls)
	}
	if tokenCalls != 3 {
		t.Fatalf("token read %d times, want 3 (two failed reads, then kept though too short)", tokenCalls)
	}
}

func TestConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"ok", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": webhookARN, "STREAMFOLD_INGEST_TOKEN_SECRET_ARN": tokenARN, "STREAMFOLD_STAGE": "prod"}, ""},
		{"no secret", map[string]string{"STREAMFOLD_INGEST_TOKEN_SECRET_ARN": tokenARN}, "ingest: GITHUB_WEBHOOK_SECRET_ARN: is required (the Secrets Manager secret holding the GitHub webhook secret)"},
		{"not an ARN", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": "my-secret", "STREAMFOLD_INGEST_TOKEN_SECRET_ARN": tokenARN}, `ingest: GITHUB_WEBHOOK_SECRET_ARN: must be a Secrets Manager ARN (arn:...:secretsmanager:...), got "my-secret"`},
		{"no token secret", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": webhookARN}, "ingest: STREAMFOLD_INGEST_TOKEN_SECRET_ARN: is required (the Secrets Manager secret holding the bearer token of POST /events and POST /eventbridge)"},
		{"token secret not an ARN", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": webhookARN, "STREAMFOLD_INGEST_TOKEN_SECRET_ARN": "arn:aws:s3:::bucket"}, `ingest: STREAMFOLD_INGEST_TOKEN_SECRET_ARN: must be a Secrets Manager ARN (arn:...:secretsmanager:...), got "arn:aws:s3:::bucket"`},
		{"bad stage", map[string]string{"GITHUB_WEBHOOK_SECRET_ARN": webhookARN, "STREAMFOLD_INGEST_TOKEN_SECRET_ARN": tokenARN, "STREAMFOLD_STAGE": "qa"}, `schema: Naming.Stage: must be one of dev, stage, prod, got "qa"`},
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
