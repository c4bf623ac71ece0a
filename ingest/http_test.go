package ingest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/golden"
	"github.com/streamfold/streamfold/schema"
)

const (
	testToken   = "test-ingest-token-0123456789"
	fixedNowRFC = "2026-01-02T03:04:05Z"
)

// memPut is an in-memory PutItemAPI with the event table's condition: a
// second put of a (subject, id) fails the condition. Puts of ids in fail
// fail with a non-retryable error.
type memPut struct {
	mu    sync.Mutex
	items map[string]map[string]types.AttributeValue
	order []string
	fail  map[string]bool
}

func (m *memPut) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := attrS(in.Item, schema.AttrID)
	if m.fail[id] {
		return nil, errors.New("injected write failure")
	}
	key := attrS(in.Item, schema.AttrSubject) + "\x00" + id
	if m.items == nil {
		m.items = map[string]map[string]types.AttributeValue{}
	}
	if old, ok := m.items[key]; ok {
		ccf := &types.ConditionalCheckFailedException{Message: new(string)}
		if in.ReturnValuesOnConditionCheckFailure == types.ReturnValuesOnConditionCheckFailureAllOld {
			ccf.Item = old
		}
		return nil, ccf
	}
	m.items[key] = in.Item
	m.order = append(m.order, key)
	return &dynamodb.PutItemOutput{}, nil
}

// stored returns the events written, in write order.
func (m *memPut) stored(t *testing.T) []schema.Event {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []schema.Event
	for _, k := range m.order {
		e, err := schema.EventFromItem(m.items[k])
		if err != nil {
			t.Fatalf("stored item %q: %v", k, err)
		}
		out = append(out, e)
	}
	return out
}

func fixedNow() time.Time {
	t, _ := time.Parse(time.RFC3339, fixedNowRFC)
	return t
}

// newTestHandler is the handler the fixtures run against: a real Appender
// over memPut, the test secret and token, DetailTags and the static tags of
// testdata/static_tags.json.
func newTestHandler(t *testing.T, put *memPut, edit func(*HTTPConfig)) *HTTPHandler {
	t.Helper()
	app, err := NewAppender(put, AppenderConfig{Table: "events", Now: fixedNow, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	tags, err := LoadStaticTags("testdata/static_tags.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := HTTPConfig{
		Appender:          app,
		WebhookSecret:     StaticSecret(testSecret),
		Webhook:           WebhookConfig{Now: fixedNow},
		Token:             StaticSecret(testToken),
		StepFunctionsTags: tags,
		DetailTags:        true,
	}
	if edit != nil {
		edit(&cfg)
	}
	h, err := NewHTTPHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// readHTTPFixture parses a raw HTTP/1.1 request: request line, headers, a
// blank line, and the body byte for byte.
func readHTTPFixture(t *testing.T, path string) *http.Request {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(b, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line after the headers", path)
	}
	lines := strings.Split(string(head), "\n")
	first := strings.Fields(lines[0])
	if len(first) != 3 {
		t.Fatalf("%s: request line %q", path, lines[0])
	}
	r := httptest.NewRequest(first[0], first[1], bytes.NewReader(body))
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("%s: header line %q", path, l)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if strings.EqualFold(k, "Host") {
			r.Host = v
			continue
		}
		r.Header.Add(k, v)
	}
	return r
}

// renderExchange is the golden form of a response and the events it appended.
func renderExchange(rec *httptest.ResponseRecorder, stored []schema.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d\n", rec.Code)
	for _, h := range []string{"Content-Type", "Allow", "WWW-Authenticate"} {
		if v := rec.Header().Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	b.WriteString(rec.Body.String())
	if len(stored) > 0 {
		b.WriteString("\nappended:\n")
		for _, e := range stored {
			line, _ := json.Marshal(e)
			b.Write(line)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestHTTPFixtures sends every request of testdata/cloudevents and
// testdata/http through the handler and compares the response and the
// events appended with the golden file.
func TestHTTPFixtures(t *testing.T) {
	var files []string
	for _, dir := range []string{"testdata/cloudevents", "testdata/http"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.http"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 29 {
		t.Fatalf("found %d fixtures, want the 29 or more of testdata/cloudevents and testdata/http", len(files))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".http")
		t.Run(filepath.Base(filepath.Dir(path))+"/"+name, func(t *testing.T) {
			put := &memPut{}
			h := newTestHandler(t, put, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, readHTTPFixture(t, path))
			got := renderExchange(rec, put.stored(t))
			golden.Check(t, strings.TrimSuffix(path, ".http")+".golden", []byte(got))
			checkResponseShape(t, rec, name)
		})
	}
}

// checkResponseShape checks what every answer of the handler has: a JSON
// body, and for each status the body shape the package documents.
func checkResponseShape(t *testing.T, rec *httptest.ResponseRecorder, name string) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, rec.Body)
	}
	_, hasStatus := body["status"]
	_, hasResults := body["results"]
	_, hasError := body["error"]
	switch {
	case rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" && !strings.HasPrefix(name, "webhook"):
		t.Error("401 without WWW-Authenticate (a bearer route)")
	case rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != http.MethodPost:
		t.Error("405 without Allow: POST")
	case !hasStatus && !hasResults && !hasError:
		t.Errorf("body has neither status, results nor error: %s", rec.Body)
	case hasStatus && body["status"] != StatusAccepted && body["status"] != StatusDuplicate && body["status"] != "pong" && body["status"] != "ignored" && !hasError:
		t.Errorf("status %v without error: %s", body["status"], rec.Body)
	}
}

// post sends body to path with the test token and headers.
func post(h http.Handler, path string, header map[string]string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

const messageFailed = `{"specversion":"1.0","type":"rez.message.failed","source":"rez_agent/dev","id":"%s","time":"2025-10-21T14:30:15Z","data":{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","error_message":"%s"}}`

// incompressible returns n characters of deterministic base64 of random
// bytes, which zstd barely shrinks.
func incompressible(n int) string {
	b := make([]byte, n)
	r := rand.New(rand.NewChaCha8([32]byte{7}))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func structured(id, msg string) []byte { return []byte(fmt.Sprintf(messageFailed, id, msg)) }

var (
	ctStructured = map[string]string{"Content-Type": MediaTypeCloudEvent}
	ctBatch      = map[string]string{"Content-Type": MediaTypeCloudEventBatch}
)

func decodeResult(t *testing.T, rec *httptest.ResponseRecorder) EventResult {
	t.Helper()
	var res EventResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return res
}

func decodeBatchResult(t *testing.T, rec *httptest.ResponseRecorder) BatchResult {
	t.Helper()
	var res BatchResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return res
}

// TestEventsOutcomes: the answers that need a store's state or a failure:
// a duplicate, a failed write (503, retryable) next to a rejected event in
// a batch, an event too large to store, and a retry of the failed batch.
func TestEventsOutcomes(t *testing.T) {
	put := &memPut{fail: map[string]bool{"will-fail": true}}
	h := newTestHandler(t, put, nil)

	rec := post(h, PathEvents, ctStructured, structured("m-1", "boom"))
	if rec.Code != http.StatusAccepted || decodeResult(t, rec).Status != StatusAccepted {
		t.Fatalf("first: %d %s", rec.Code, rec.Body)
	}
	rec = post(h, PathEvents, ctStructured, structured("m-1", "boom"))
	if res := decodeResult(t, rec); rec.Code != http.StatusOK || res.Status != StatusDuplicate || res.ID != "m-1" || res.Subject != "messages/550e8400-e29b-41d4-a716-446655440000" {
		t.Fatalf("redelivery: %d %s", rec.Code, rec.Body)
	}

	rec = post(h, PathEvents, ctStructured, structured("will-fail", "boom"))
	if res := decodeResult(t, rec); rec.Code != http.StatusServiceUnavailable || res.Status != StatusFailed || res.Error != "event not stored; retry later" {
		t.Fatalf("failed write: %d %s", rec.Code, rec.Body)
	}

	batch := []byte("[" + string(structured("will-fail", "a")) + "," + string(structured("m-2", "b")) + `,{"specversion":"1.0"}` + "," + string(structured("m-1", "boom")) + "]")
	rec = post(h, PathEvents, ctBatch, batch)
	b := decodeBatchResult(t, rec)
	statuses := []string{}
	for _, r := range b.Results {
		statuses = append(statuses, r.Status)
	}
	if rec.Code != http.StatusServiceUnavailable || !slices.Equal(statuses, []string{StatusFailed, StatusAccepted, StatusRejected, StatusDuplicate}) ||
		b.Failed != 1 || b.Accepted != 1 || b.Rejected != 1 || b.Duplicates != 1 {
		t.Fatalf("batch with a failed write: %d %s", rec.Code, rec.Body)
	}
	if got := b.Results[2].Error; got != `source: is required; time: is required (RFC 3339); type: is required` {
		t.Errorf("rejected batch member: %q", got)
	}

	// The client retries the whole batch once the store is back: the
	// failed event is accepted, the others are duplicates or rejected.
	put.mu.Lock()
	put.fail = nil
	put.mu.Unlock()
	rec = post(h, PathEvents, ctBatch, batch)
	b = decodeBatchResult(t, rec)
	if rec.Code != http.StatusMultiStatus || b.Accepted != 1 || b.Duplicates != 2 || b.Rejected != 1 || b.Failed != 0 {
		t.Fatalf("retried batch: %d %s", rec.Code, rec.Body)
	}

	// 600 KB of incompressible text: its item is above 400 KB even compressed.
	huge := structured("huge", incompressible(600_000))
	rec = post(h, PathEvents, ctStructured, huge)
	res := decodeResult(t, rec)
	if rec.Code != http.StatusRequestEntityTooLarge || res.Status != StatusTooLarge || !strings.Contains(res.Error, "is too large to store") || !strings.Contains(res.Error, "DynamoDB's item limit is 409600 bytes") {
		t.Fatalf("too large: %d %s", rec.Code, rec.Body)
	}
	rec = post(h, PathEvents, ctBatch, []byte("["+string(huge)+","+string(structured("m-3", "x"))+"]"))
	b = decodeBatchResult(t, rec)
	if rec.Code != http.StatusMultiStatus || b.TooLarge != 1 || b.Accepted != 1 || b.Results[0].Status != StatusTooLarge {
		t.Fatalf("batch with a too-large event: %d %s", rec.Code, rec.Body)
	}
	ids := []string{}
	for _, e := range put.stored(t) {
		ids = append(ids, e.ID)
	}
	if want := []string{"m-1", "m-2", "will-fail", "m-3"}; !slices.Equal(ids, want) {
		t.Fatalf("stored %v, want %v", ids, want)
	}
}

// TestBodyLimits: a body above a route's limit is 413 with the limit,
// whether Content-Length says so or the body is streamed; so is a batch
// with more events than allowed. Nothing is appended.
func TestBodyLimits(t *testing.T) {
	put := &memPut{}
	h := newTestHandler(t, put, func(c *HTTPConfig) {
		c.MaxEventsBodyBytes = 4096
		c.MaxBatchEvents = 2
		c.MaxEventBridgeBodyBytes = 1024
		c.Webhook.MaxBodyBytes = 2048
	})
	big := structured("big", strings.Repeat("x", 5000))
	three := []byte("[" + string(structured("a", "1")) + "," + string(structured("b", "2")) + "," + string(structured("c", "3")) + "]")
	eb := readTestdata(t, "eventbridge/execution_failed_full.json")
	tests := []struct {
		name    string
		path    string
		header  map[string]string
		body    []byte
		chunked bool
		want    string
	}{
		{"events, sized", PathEvents, ctStructured, big, false, "body exceeds 4096 bytes, the limit of POST /events; send fewer events per batch"},
		{"events, chunked", PathEvents, ctStructured, big, true, "body exceeds 4096 bytes, the limit of POST /events; send fewer events per batch"},
		{"batch too long", PathEvents, ctBatch, three, false, "the batch holds 3 events; at most 2 are taken per request"},
		{"eventbridge, chunked", PathEventBridge, nil, append(eb, bytes.Repeat([]byte(" "), 1024)...), true, "body exceeds 1024 bytes, the limit of POST /eventbridge"},
		{"webhook, sized", PathGitHubWebhook, nil, bytes.Repeat([]byte(" "), 4096), false, "body exceeds 2048 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tt.path, bytes.NewReader(tt.body))
			if tt.chunked {
				r = httptest.NewRequest(http.MethodPost, tt.path, io.MultiReader(bytes.NewReader(tt.body)))
				r.ContentLength = -1
			}
			r.Header.Set("Authorization", "Bearer "+testToken)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			var body errorBody
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusRequestEntityTooLarge || body.Error != tt.want {
				t.Fatalf("%d %s, want 413 %q", rec.Code, rec.Body, tt.want)
			}
		})
	}
	if n := len(put.stored(t)); n != 0 {
		t.Fatalf("%d events appended", n)
	}
}

// failingSecret is a Secret that cannot be read (yet).
type failingSecret struct{ err error }

func (s failingSecret) Secret(context.Context) ([]byte, error) { return nil, s.err }

// TestSecretsUnavailable: a route whose secret cannot be read answers 503
// (retry later), never 401; the other routes are not affected.
func TestSecretsUnavailable(t *testing.T) {
	put := &memPut{}
	notSet := failingSecret{errors.New("secret has no value yet")}
	h := newTestHandler(t, put, func(c *HTTPConfig) { c.Token = notSet })
	rec := post(h, PathEvents, ctStructured, structured("a", "b"))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "ingest token unavailable; retry later") {
		t.Fatalf("events without a token: %d %s", rec.Code, rec.Body)
	}
	hook := readHTTPFixture(t, "testdata/http/webhook_workflow_job_queued.http")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, hook)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("webhook beside an unreadable token: %d %s", rec.Code, rec.Body)
	}

	h = newTestHandler(t, put, func(c *HTTPConfig) { c.WebhookSecret = notSet })
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, readHTTPFixture(t, "testdata/http/webhook_workflow_job_queued.http"))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "webhook secret unavailable; redeliver later") {
		t.Fatalf("webhook without a secret: %d %s", rec.Code, rec.Body)
	}
}

func TestHTTPConfigValidate(t *testing.T) {
	app := &recordingAppender{}
	tests := []struct {
		name string
		cfg  HTTPConfig
		want string
	}{
		{"ok", HTTPConfig{Appender: app, Token: StaticSecret(testToken)}, ""},
		{"no appender", HTTPConfig{Token: StaticSecret(testToken)}, "ingest: HTTPConfig.Appender: is required"},
		{"no route", HTTPConfig{Appender: app}, "ingest: HTTPConfig.WebhookSecret, HTTPConfig.Token: at least one is required (no route would be served)"},
		{"short token", HTTPConfig{Appender: app, Token: StaticSecret("short")}, "ingest: HTTPConfig.Token: must be at least 16 bytes, got 5"},
		{"empty webhook secret", HTTPConfig{Appender: app, WebhookSecret: StaticSecret("")}, "ingest: HTTPConfig.WebhookSecret: must be at least 16 bytes (a random string, e.g. openssl rand -hex 20), got 0"},
		{"short webhook secret", HTTPConfig{Appender: app, WebhookSecret: StaticSecret("secret")}, "ingest: HTTPConfig.WebhookSecret: must be at least 16 bytes (a random string, e.g. openssl rand -hex 20), got 6"},
		{"body limit", HTTPConfig{Appender: app, Token: StaticSecret(testToken), MaxEventsBodyBytes: 26 << 20}, "ingest: HTTPConfig.MaxEventsBodyBytes: must be between 1 and 26214400, got 27262976"},
		{"batch limit", HTTPConfig{Appender: app, Token: StaticSecret(testToken), MaxBatchEvents: -1}, "ingest: HTTPConfig.MaxBatchEvents: must be at least 1, got -1"},
		{"eventbridge limit", HTTPConfig{Appender: app, Token: StaticSecret(testToken), MaxEventBridgeBodyBytes: -1}, "ingest: HTTPConfig.MaxEventBridgeBodyBytes: must be between 1 and 26214400, got -1"},
		{"webhook limit", HTTPConfig{Appender: app, WebhookSecret: StaticSecret(testSecret), Webhook: WebhookConfig{MaxBodyBytes: 26 << 20}}, "ingest: WebhookConfig.MaxBodyBytes: must be between 1 and 26214400, got 27262976"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHTTPHandler(tt.cfg)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("NewHTTPHandler = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHTTPPaths: a route whose secret is not configured is not served.
func TestHTTPPaths(t *testing.T) {
	app := &recordingAppender{}
	tests := []struct {
		name string
		cfg  HTTPConfig
		want []string
	}{
		{"all", HTTPConfig{Appender: app, WebhookSecret: StaticSecret(testSecret), Token: StaticSecret(testToken)}, []string{PathGitHubWebhook, PathEvents, PathEventBridge}},
		{"webhook only", HTTPConfig{Appender: app, WebhookSecret: StaticSecret(testSecret)}, []string{PathGitHubWebhook}},
		{"token only", HTTPConfig{Appender: app, Token: StaticSecret(testToken)}, []string{PathEvents, PathEventBridge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHTTPHandler(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Paths(); !slices.Equal(got, tt.want) {
				t.Fatalf("Paths() = %v, want %v", got, tt.want)
			}
			for _, p := range []string{PathGitHubWebhook, PathEvents, PathEventBridge} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
				want := http.StatusNotFound
				if slices.Contains(tt.want, p) {
					want = http.StatusMethodNotAllowed
				}
				if rec.Code != want {
					t.Errorf("GET %s: %d, want %d", p, rec.Code, want)
				}
			}
		})
	}
}
