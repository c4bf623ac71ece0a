package ingest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// recordingAppender is a fake eventAppender: it records the events it is given
// and reports Duplicate for a (subject, id) it has seen, like the real one.
// outcome and err, when set, override what it reports.
type recordingAppender struct {
	mu      sync.Mutex
	events  []schema.Event
	seen    map[string]bool
	outcome Outcome
	err     error
}

func (a *recordingAppender) Append(_ context.Context, events []schema.Event) (Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	res := Result{Outcomes: make([]Outcome, len(events)), Errors: make([]error, len(events))}
	for i, e := range events {
		a.events = append(a.events, e)
		key := e.Subject + "\x00" + e.ID
		switch {
		case a.outcome != 0:
			res.Outcomes[i], res.Errors[i] = a.outcome, a.err
		case a.seen[key]:
			res.Outcomes[i] = Duplicate
		default:
			a.seen[key] = true
			res.Outcomes[i] = Accepted
		}
	}
	if a.outcome == 0 && a.err != nil {
		return Result{}, a.err
	}
	return res, nil
}

func (a *recordingAppender) appended() []schema.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]schema.Event(nil), a.events...)
}

var testSecret = []byte("It's a Secret to Everybody")

// sign is the X-Hub-Signature-256 value GitHub sends for body.
func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookRequest is a signed POST of a delivery.
func webhookRequest(event, delivery string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/github/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", delivery)
	r.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
	return r
}

// newTestWebhook returns a handler over a fresh recordingAppender, logging
// JSON lines into the returned buffer.
func newTestWebhook(t *testing.T, maxBody int64) (*WebhookHandler, *recordingAppender, *bytes.Buffer) {
	t.Helper()
	a := &recordingAppender{}
	var logs bytes.Buffer
	h, err := NewWebhookHandler(a, WebhookConfig{
		Secret:       testSecret,
		MaxBodyBytes: maxBody,
		Now:          func() time.Time { return time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC) },
	}, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	return h, a, &logs
}

type webhookResponse struct {
	status int
	header http.Header
	body   map[string]string
}

// serve runs one request through h and decodes the JSON response.
func serve(t *testing.T, h http.Handler, r *http.Request) webhookResponse {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := webhookResponse{status: w.Code, header: w.Header()}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp.body); err != nil {
		t.Fatalf("response body %q is not a JSON object of strings: %v", w.Body.String(), err)
	}
	return resp
}

func TestWebhookHandler(t *testing.T) {
	queued := readTestdata(t, "github/workflow_job_queued.json")
	completed := readTestdata(t, "github/workflow_job_completed.json")
	badID := editJSON(t, queued, func(m map[string]any) { sub(m, "workflow_job")["id"] = 0 })
	big := append(bytes.Repeat([]byte(" "), 2048), queued...)
	// queuedSigned is a delivery of queued with sig as its signature header.
	queuedSigned := func(sig string) func() *http.Request {
		return func() *http.Request {
			r := webhookRequest("workflow_job", "d", queued)
			r.Header.Set("X-Hub-Signature-256", sig)
			return r
		}
	}
	malformed := map[string]string{"error": "malformed X-Hub-Signature-256 header; want sha256=<64 hex digits>"}

	tests := []struct {
		name       string
		maxBody    int64
		request    func() *http.Request
		appender   func(a *recordingAppender)
		wantStatus int
		wantBody   map[string]string
		wantHeader map[string]string
		wantEvents int // events handed to the appender
	}{
		{
			name:       "signed queued job is accepted",
			request:    func() *http.Request { return webhookRequest("workflow_job", "d-queued", queued) },
			wantStatus: http.StatusAccepted,
			wantBody:   map[string]string{"status": "accepted", "id": "d-queued"},
			wantEvents: 1,
		},
		{
			name:       "signed completed job is accepted",
			request:    func() *http.Request { return webhookRequest("workflow_job", "d-completed", completed) },
			wantStatus: http.StatusAccepted,
			wantBody:   map[string]string{"status": "accepted", "id": "d-completed"},
			wantEvents: 1,
		},
		{
			name: "missing signature is unauthorized",
			request: func() *http.Request {
				r := webhookRequest("workflow_job", "d", queued)
				r.Header.Del("X-Hub-Signature-256")
				return r
			},
			wantStatus: http.StatusUnauthorized,
			wantBody:   map[string]string{"error": "missing X-Hub-Signature-256 header"},
		},
		{
			name:       "signature of another body is unauthorized",
			request:    queuedSigned(sign(testSecret, completed)),
			wantStatus: http.StatusUnauthorized,
			wantBody:   map[string]string{"error": "signature does not match"},
		},
		{
			name:       "signature computed with another secret is unauthorized",
			request:    queuedSigned(sign([]byte("another secret"), queued)),
			wantStatus: http.StatusUnauthorized,
			wantBody:   map[string]string{"error": "signature does not match"},
		},
		{
			name:       "sha1 signature header is malformed",
			request:    queuedSigned("sha1=" + strings.Repeat("ab", 20)),
			wantStatus: http.StatusUnauthorized,
			wantBody:   malformed,
		},
		{
			name:       "bare hex signature header is malformed",
			request:    queuedSigned(strings.TrimPrefix(sign(testSecret, queued), "sha256=")),
			wantStatus: http.StatusUnauthorized,
			wantBody:   malformed,
		},
		{
			name:       "truncated signature header is malformed",
			request:    queuedSigned(sign(testSecret, queued)[:40]),
			wantStatus: http.StatusUnauthorized,
			wantBody:   malformed,
		},
		{
			name:       "non-hex signature header is malformed",
			request:    queuedSigned("sha256=" + strings.Repeat("zz", 32)),
			wantStatus: http.StatusUnauthorized,
			wantBody:   malformed,
		},
		{
			name:       "oversized body with Content-Length is refused",
			maxBody:    1024,
			request:    func() *http.Request { return webhookRequest("workflow_job", "d", big) },
			wantStatus: http.StatusRequestEntityTooLarge,
			wantBody:   map[string]string{"error": "body exceeds 1024 bytes"},
		},
		{
			name:    "oversized body without Content-Length is refused",
			maxBody: 1024,
			request: func() *http.Request {
				r := webhookRequest("workflow_job", "d", big)
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(big))) // length unknown
				r.ContentLength = -1
				return r
			},
			wantStatus: http.StatusRequestEntityTooLarge,
			wantBody:   map[string]string{"error": "body exceeds 1024 bytes"},
		},
		{
			name:    "oversized body is refused before its signature is checked",
			maxBody: 1024,
			request: func() *http.Request {
				r := webhookRequest("workflow_job", "d", big)
				r.Header.Set("X-Hub-Signature-256", "garbage")
				return r
			},
			wantStatus: http.StatusRequestEntityTooLarge,
			wantBody:   map[string]string{"error": "body exceeds 1024 bytes"},
		},
		{
			name:    "body of exactly the limit is read",
			maxBody: int64(len(queued)),
			request: func() *http.Request {
				r := webhookRequest("workflow_job", "d-exact", queued)
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(queued)))
				r.ContentLength = -1
				return r
			},
			wantStatus: http.StatusAccepted,
			wantBody:   map[string]string{"status": "accepted", "id": "d-exact"},
			wantEvents: 1,
		},
		{
			name: "GET is not allowed",
			request: func() *http.Request {
				return httptest.NewRequest(http.MethodGet, "/github/webhook", nil)
			},
			wantStatus: http.StatusMethodNotAllowed,
			wantBody:   map[string]string{"error": "method GET not allowed; use POST"},
			wantHeader: map[string]string{"Allow": "POST"},
		},
		{
			name: "ping gets pong",
			request: func() *http.Request {
				return webhookRequest("ping", "d-ping", []byte(`{"zen":"Keep it logically awesome.","hook_id":109948940}`))
			},
			wantStatus: http.StatusOK,
			wantBody:   map[string]string{"status": "pong"},
		},
		{
			name: "push is ignored",
			request: func() *http.Request {
				return webhookRequest("push", "d-push", []byte(`{"ref":"refs/heads/main"}`))
			},
			wantStatus: http.StatusAccepted,
			wantBody:   map[string]string{"status": "ignored", "event": "push"},
		},
		{
			name: "unsigned ping is unauthorized",
			request: func() *http.Request {
				r := webhookRequest("ping", "d-ping", []byte(`{}`))
				r.Header.Del("X-Hub-Signature-256")
				return r
			},
			wantStatus: http.StatusUnauthorized,
			wantBody:   map[string]string{"error": "missing X-Hub-Signature-256 header"},
		},
		{
			name:       "invalid payload is a bad request naming the field",
			request:    func() *http.Request { return webhookRequest("workflow_job", "d-bad", badID) },
			wantStatus: http.StatusBadRequest,
			wantBody:   map[string]string{"error": "data.workflow_job.id: must be a positive integer"},
		},
		{
			name:       "missing delivery id is a bad request",
			request:    func() *http.Request { return webhookRequest("workflow_job", "", queued) },
			wantStatus: http.StatusBadRequest,
			wantBody:   map[string]string{"error": "missing github delivery header: X-GitHub-Delivery"},
		},
		{
			name:       "failed append asks for redelivery",
			request:    func() *http.Request { return webhookRequest("workflow_job", "d-fail", queued) },
			appender:   func(a *recordingAppender) { a.outcome, a.err = Failed, errors.New("throttled") },
			wantStatus: http.StatusServiceUnavailable,
			wantBody:   map[string]string{"error": "event not stored; redeliver later"},
			wantEvents: 1,
		},
		{
			name:       "append error asks for redelivery",
			request:    func() *http.Request { return webhookRequest("workflow_job", "d-err", queued) },
			appender:   func(a *recordingAppender) { a.err = context.DeadlineExceeded },
			wantStatus: http.StatusServiceUnavailable,
			wantBody:   map[string]string{"error": "event not stored; redeliver later"},
			wantEvents: 1,
		},
		{
			name:    "an event too large to store is 413 with the sizes",
			request: func() *http.Request { return webhookRequest("workflow_job", "d-huge", queued) },
			appender: func(a *recordingAppender) {
				a.outcome = Rejected
				a.err = &TooLargeError{Subject: "github/1/job/2", ID: "d-huge", ItemBytes: 512000, DataBytes: 700000, Compressed: true, Limit: schema.MaxItemBytes}
			},
			wantStatus: http.StatusRequestEntityTooLarge,
			wantBody:   map[string]string{"error": "event github/1/job/2/d-huge is too large to store: its item would be 512000 bytes (data 700000 bytes, stored compressed) and DynamoDB's item limit is 409600 bytes (400 KB)"},
			wantEvents: 1,
		},
		{
			name:    "rejected append is a bad request",
			request: func() *http.Request { return webhookRequest("workflow_job", "d-rej", queued) },
			appender: func(a *recordingAppender) {
				a.outcome = Rejected
				a.err = &schema.ValidationError{Errors: []*schema.FieldError{{Field: "data", Rule: "is too large"}}}
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   map[string]string{"error": "data: is too large"},
			wantEvents: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, a, logs := newTestWebhook(t, tt.maxBody)
			if tt.appender != nil {
				tt.appender(a)
			}
			resp := serve(t, h, tt.request())
			if resp.status != tt.wantStatus {
				t.Errorf("status = %d, want %d", resp.status, tt.wantStatus)
			}
			if !reflect.DeepEqual(resp.body, tt.wantBody) {
				t.Errorf("body = %v, want %v", resp.body, tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if got := resp.header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if got := len(a.appended()); got != tt.wantEvents {
				t.Errorf("appender got %d events, want %d", got, tt.wantEvents)
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			if len(lines) != 1 {
				t.Fatalf("logged %d lines, want 1:\n%s", len(lines), logs)
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
				t.Fatal(err)
			}
			if line["status"] != float64(tt.wantStatus) || line["outcome"] == "" || line["outcome"] == nil {
				t.Errorf("log line %s lacks status %d or an outcome", lines[0], tt.wantStatus)
			}
		})
	}
}

func TestWebhookHandlerAppendsTheDeliveryAsIs(t *testing.T) {
	h, a, logs := newTestWebhook(t, 0)
	body := readTestdata(t, "github/workflow_job_completed.json")
	if resp := serve(t, h, webhookRequest("workflow_job", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body)); resp.status != http.StatusAccepted {
		t.Fatalf("status = %d, want 202", resp.status)
	}
	got := a.appended()
	if len(got) != 1 {
		t.Fatalf("appended %d events, want 1", len(got))
	}
	e := got[0]
	if e.ID != "72d3162e-cc78-11e3-81ab-4c9367dc0958" || e.Type != schema.TypeJobCompleted ||
		e.Source != "https://github.com/runs-on" || e.Subject != "github/12345/job/31275968012" ||
		!e.Time.Equal(time.Date(2025, 1, 15, 10, 5, 30, 0, time.UTC)) || !bytes.Equal(e.Data, body) {
		t.Errorf("appended event = %+v", e)
	}
	var line struct {
		Delivery, Event, Outcome string
		Status                   int
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	want := struct {
		Delivery, Event, Outcome string
		Status                   int
	}{"72d3162e-cc78-11e3-81ab-4c9367dc0958", "workflow_job", "accepted", 202}
	if line != want {
		t.Errorf("log line = %+v, want %+v", line, want)
	}
}

func TestWebhookHandlerRedeliveryIsDuplicate(t *testing.T) {
	h, a, _ := newTestWebhook(t, 0)
	body := readTestdata(t, "github/workflow_job_queued.json")
	steps := []struct {
		name       string
		delivery   string
		wantStatus int
		wantBody   map[string]string
	}{
		{"first delivery", "d-1", http.StatusAccepted, map[string]string{"status": "accepted", "id": "d-1"}},
		{"redelivery of the same delivery", "d-1", http.StatusOK, map[string]string{"status": "duplicate", "id": "d-1"}},
		{"another delivery of the same job", "d-2", http.StatusAccepted, map[string]string{"status": "accepted", "id": "d-2"}},
	}
	for _, s := range steps {
		resp := serve(t, h, webhookRequest("workflow_job", s.delivery, body))
		if resp.status != s.wantStatus || !reflect.DeepEqual(resp.body, s.wantBody) {
			t.Errorf("%s: %d %v, want %d %v", s.name, resp.status, resp.body, s.wantStatus, s.wantBody)
		}
	}
	if got := len(a.appended()); got != 3 {
		t.Errorf("appender got %d events, want 3", got)
	}
}

// TestWebhookHandlerOverHTTP sends chunked (length-less) and sized requests
// through a real server.
func TestWebhookHandlerOverHTTP(t *testing.T) {
	h, _, _ := newTestWebhook(t, 4096)
	srv := httptest.NewServer(h)
	defer srv.Close()
	queued := readTestdata(t, "github/workflow_job_queued.json")
	tests := []struct {
		name       string
		body       []byte
		chunked    bool
		wantStatus int
	}{
		{"too large, sized", append(bytes.Repeat([]byte(" "), 8192), queued...), false, http.StatusRequestEntityTooLarge},
		{"too large, chunked", append(bytes.Repeat([]byte(" "), 8192), queued...), true, http.StatusRequestEntityTooLarge},
		{"within the limit, chunked", editJSON(t, queued, func(m map[string]any) {
			delete(m, "repository")
			m["repository"] = map[string]any{"full_name": "runs-on/test", "owner": map[string]any{"login": "runs-on"}}
			delete(m, "organization")
			delete(m, "sender")
		}), true, http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-GitHub-Event", "workflow_job")
			req.Header.Set("X-GitHub-Delivery", "d-"+tt.name)
			req.Header.Set("X-Hub-Signature-256", sign(testSecret, tt.body))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				b, _ := io.ReadAll(resp.Body)
				t.Errorf("status = %d (%s), want %d", resp.StatusCode, b, tt.wantStatus)
			}
		})
	}
}

func TestWebhookConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     WebhookConfig
		wantErr string
	}{
		{"defaults with a secret", WebhookConfig{Secret: testSecret}, ""},
		{"empty secret", WebhookConfig{}, "ingest: WebhookConfig.Secret: is required"},
		{"short secret", WebhookConfig{Secret: []byte("mysecret")},
			"ingest: WebhookConfig.Secret: must be at least 16 bytes (a random string, e.g. openssl rand -hex 20), got 8"},
		{"negative body limit", WebhookConfig{Secret: testSecret, MaxBodyBytes: -1},
			"ingest: WebhookConfig.MaxBodyBytes: must be between 1 and 26214400, got -1"},
		{"body limit above GitHub's cap", WebhookConfig{Secret: testSecret, MaxBodyBytes: 26214401},
			"ingest: WebhookConfig.MaxBodyBytes: must be between 1 and 26214400, got 26214401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.SetDefaults()
			err := cfg.Validate()
			if got := errText(err); got != tt.wantErr {
				t.Errorf("Validate() = %q, want %q", got, tt.wantErr)
			}
			_, err = NewWebhookHandler(&recordingAppender{}, tt.cfg, nil)
			if got := errText(err); got != tt.wantErr {
				t.Errorf("NewWebhookHandler() = %q, want %q", got, tt.wantErr)
			}
		})
	}
	var cfg WebhookConfig
	cfg.SetDefaults()
	if cfg.MaxBodyBytes != 1<<20 || cfg.Now == nil {
		t.Errorf("SetDefaults() = %+v, want 1 MiB and a clock", cfg)
	}
	if _, err := NewWebhookHandler(nil, WebhookConfig{Secret: testSecret}, nil); errText(err) != "ingest: NewWebhookHandler: appender is required" {
		t.Errorf("NewWebhookHandler(nil) = %v", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// storingPut is a PutItemAPI that keeps every item it is given.
type storingPut struct {
	mu    sync.Mutex
	items []map[string]types.AttributeValue
}

func (p *storingPut) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items = append(p.items, in.Item)
	return &dynamodb.PutItemOutput{}, nil
}

// TestWebhookHandlerLargeDeliveries sends deliveries above DynamoDB's 400 KB
// item limit through the real Appender. Before compression every one of
// them failed the PutItem (ValidationException) and was answered 503, so
// GitHub's redeliveries failed for ever. A 590 KB job (3,200
// steps) now compresses far below the limit and is stored; a delivery that
// stays above the limit compressed is answered 413 with the sizes, and never
// reaches DynamoDB.
func TestWebhookHandlerLargeDeliveries(t *testing.T) {
	completed := readTestdata(t, "github/workflow_job_completed.json")
	manySteps := editJSON(t, completed, func(m map[string]any) {
		job := sub(m, "workflow_job")
		var steps []any
		for i := 1; len(steps) < 3200; i++ {
			steps = append(steps, map[string]any{"name": fmt.Sprintf("Run ./scripts/test-shard.sh %d of 3200", i), "status": "completed",
				"conclusion": "success", "number": i, "started_at": "2025-01-15T10:00:25Z", "completed_at": "2025-01-15T10:00:27Z"})
		}
		job["steps"] = steps
	})
	rnd := make([]byte, 450<<10)
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	noise := editJSON(t, completed, func(m map[string]any) {
		m["enterprise"] = map[string]any{"description": base64.StdEncoding.EncodeToString(rnd)} // 600 KB of entropy
	})
	tests := []struct {
		name, delivery string
		body           []byte
		wantStatus     int
		wantError      string // a regular expression: the compressed size depends on the zstd version
	}{
		{"590 KB of steps is stored compressed", "d-steps", manySteps, http.StatusAccepted, "^$"},
		{"600 KB of noise is 413", "d-noise", noise, http.StatusRequestEntityTooLarge,
			`^event github/12345/job/31275968012/d-noise is too large to store: its item would be 4[0-9]{5} bytes \(data 622453 bytes, stored compressed\) and DynamoDB's item limit is 409600 bytes \(400 KB\)$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.body) < 450_000 {
				t.Fatalf("body is %d bytes, want at least 450 KB", len(tt.body))
			}
			put := &storingPut{}
			app, err := NewAppender(put, AppenderConfig{Table: "events"})
			if err != nil {
				t.Fatal(err)
			}
			h, err := NewWebhookHandler(app, WebhookConfig{Secret: testSecret}, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp := serve(t, h, webhookRequest("workflow_job", tt.delivery, tt.body))
			if resp.status != tt.wantStatus || !regexp.MustCompile(tt.wantError).MatchString(resp.body["error"]) {
				t.Fatalf("%d %v, want %d %q", resp.status, resp.body, tt.wantStatus, tt.wantError)
			}
			if tt.wantStatus != http.StatusAccepted {
				if len(put.items) != 0 {
					t.Fatalf("an event too large to store was sent to DynamoDB")
				}
				return
			}
			if len(put.items) != 1 {
				t.Fatalf("%d items written, want 1", len(put.items))
			}
			item := put.items[0]
			if size := schema.ItemSize(item); size > schema.MaxItemBytes/4 {
				t.Errorf("item is %d bytes compressed, want well below the limit", size)
			}
			e, err := schema.EventFromItem(item)
			if err != nil || !bytes.Equal(e.Data, tt.body) {
				t.Fatalf("stored data differs from the delivery (err %v)", err)
			}
		})
	}
}

// TestWebhookHandlerRefusesWhatDynamoDBCannotStore: a delivery that breaks
// one of DynamoDB's limits (a repository name over its documented length,
// a number over DynamoDB's range) is answered 400 naming the field and the
// limit, and nothing is appended: GitHub does not redeliver it in vain.
func TestWebhookHandlerRefusesWhatDynamoDBCannotStore(t *testing.T) {
	orig := readTestdata(t, "github/workflow_job_completed.json")
	tests := []struct {
		name, old, new, field string
	}{
		{"repository name", `"full_name": "runs-on/test"`, `"full_name": "runs-on/` + strings.Repeat("r", schema.MaxRepoFullNameBytes) + `"`, "data.repository.full_name"},
		{"number", `"run_attempt": 1`, `"run_attempt": 1, "weight": 1e200`, "data.workflow_job.weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := bytes.Replace(orig, []byte(tt.old), []byte(tt.new), 1)
			if bytes.Equal(body, orig) {
				t.Fatalf("fixture has no %s", tt.old)
			}
			h, a, _ := newTestWebhook(t, 0)
			resp := serve(t, h, webhookRequest("workflow_job", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body))
			if resp.status != http.StatusBadRequest || !strings.Contains(resp.body["error"], tt.field) || !strings.Contains(resp.body["error"], "at most") {
				t.Fatalf("%d %v, want 400 naming %s and its limit", resp.status, resp.body, tt.field)
			}
			if n := len(a.appended()); n != 0 {
				t.Fatalf("%d events appended", n)
			}
		})
	}
}
