package ingest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// The ingest routes. Every one takes POST only.
const (
	// PathGitHubWebhook takes GitHub webhook deliveries (WebhookHandler),
	// authenticated by their X-Hub-Signature-256 HMAC.
	PathGitHubWebhook = "/webhooks/github"
	// PathEvents takes CloudEvents in the three content modes of the HTTP
	// protocol binding (DecodeCloudEvents), with a bearer token.
	PathEvents = "/events"
	// PathEventBridge takes one native EventBridge Step Functions event, as
	// EventBridge delivers it to the ingest Lambda, through the same
	// StepFunctionsAdapter, with a bearer token.
	PathEventBridge = "/eventbridge"
)

// Body limits of the routes (HTTPConfig). A larger body is answered 413.
const (
	// DefaultEventsMaxBodyBytes is the default limit of POST /events: 4 MiB,
	// which stays under a Lambda invocation's 6 MB payload limit even when
	// the function URL base64-encodes the body.
	DefaultEventsMaxBodyBytes = 4 << 20
	// DefaultEventBridgeMaxBodyBytes is the default limit of POST
	// /eventbridge: 1 MiB, EventBridge's own event size limit.
	DefaultEventBridgeMaxBodyBytes = 1 << 20
	// DefaultMaxBatchEvents is the default limit on the events of one
	// batched request.
	DefaultMaxBatchEvents = 1000
	// MaxHTTPBodyBytes is the largest body limit a route accepts (25 MiB,
	// schema.MaxDataBytes).
	MaxHTTPBodyBytes = schema.MaxDataBytes
)

// MinTokenBytes is the shortest bearer token accepted.
const MinTokenBytes = 16

// EventAppender is what the producers (the HTTP routes, the webhook
// handler, the Step Functions adapter) need of an *Appender.
type EventAppender interface {
	Append(ctx context.Context, events []schema.Event) (Result, error)
}

// Secret gives a secret when a request needs it. In AWS the secrets live in
// Secrets Manager, and reading one can fail or find no value yet: the route
// then answers 503 and the next request asks again. Implementations cache
// as they see fit and are safe for concurrent use.
type Secret interface {
	Secret(ctx context.Context) ([]byte, error)
}

// StaticSecret is a Secret with a fixed value (local runs, tests).
type StaticSecret []byte

// Secret returns s.
func (s StaticSecret) Secret(context.Context) ([]byte, error) { return s, nil }

// HTTPConfig configures the ingest HTTP handler. A route whose secret is
// nil is not served (404).
type HTTPConfig struct {
	// Appender appends the events of every route. Required.
	Appender EventAppender
	// WebhookSecret is the GitHub webhook secret of POST /webhooks/github.
	WebhookSecret Secret
	// Webhook configures the webhook handler (MaxBodyBytes, Now); its
	// Secret is ignored, WebhookSecret gives it.
	Webhook WebhookConfig
	// Token is the bearer token of POST /events and POST /eventbridge, at
	// least MinTokenBytes long. Compared in constant time.
	Token Secret
	// MaxEventsBodyBytes bounds the body of POST /events. Default
	// DefaultEventsMaxBodyBytes (4 MiB); at most MaxHTTPBodyBytes.
	MaxEventsBodyBytes int64
	// MaxBatchEvents bounds the events of one batched request. Default
	// DefaultMaxBatchEvents (1000).
	MaxBatchEvents int
	// MaxEventBridgeBodyBytes bounds the body of POST /eventbridge. Default
	// DefaultEventBridgeMaxBodyBytes (1 MiB); at most MaxHTTPBodyBytes.
	MaxEventBridgeBodyBytes int64
	// StepFunctionsTags gives POST /eventbridge the tags of a state machine
	// (in AWS a TagCache over ListTagsForResource). nil: no tags, so every
	// event without DetailTags is skipped as not an agent's.
	StepFunctionsTags TagSource
	// StepFunctionsPayloads is what POST /eventbridge keeps of an
	// execution's input, output and cause (PayloadPolicy; default hash).
	StepFunctionsPayloads PayloadPolicy
	// DetailTags makes POST /eventbridge take an event's
	// detail.stateMachineTags, when it has that member, as its state
	// machine's tags instead of asking StepFunctionsTags. For local runs,
	// where there is no Step Functions API to ask; EventBridge never sends
	// that member.
	DetailTags bool
	// Log receives one line per request; nil discards.
	Log *slog.Logger
}

// SetDefaults fills zero fields with their defaults.
func (c *HTTPConfig) SetDefaults() {
	c.MaxEventsBodyBytes = cmp.Or(c.MaxEventsBodyBytes, DefaultEventsMaxBodyBytes)
	c.MaxBatchEvents = cmp.Or(c.MaxBatchEvents, DefaultMaxBatchEvents)
	c.MaxEventBridgeBodyBytes = cmp.Or(c.MaxEventBridgeBodyBytes, DefaultEventBridgeMaxBodyBytes)
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.Webhook.SetDefaults()
}

// Validate names the first bad field.
func (c HTTPConfig) Validate() error {
	switch {
	case c.Appender == nil:
		return errors.New("ingest: HTTPConfig.Appender: is required")
	case c.WebhookSecret == nil && c.Token == nil:
		return errors.New("ingest: HTTPConfig.WebhookSecret, HTTPConfig.Token: at least one is required (no route would be served)")
	case c.MaxEventsBodyBytes < 1 || c.MaxEventsBodyBytes > MaxHTTPBodyBytes:
		return fmt.Errorf("ingest: HTTPConfig.MaxEventsBodyBytes: must be between 1 and %d, got %d", MaxHTTPBodyBytes, c.MaxEventsBodyBytes)
	case c.MaxBatchEvents < 1:
		return fmt.Errorf("ingest: HTTPConfig.MaxBatchEvents: must be at least 1, got %d", c.MaxBatchEvents)
	case c.MaxEventBridgeBodyBytes < 1 || c.MaxEventBridgeBodyBytes > MaxHTTPBodyBytes:
		return fmt.Errorf("ingest: HTTPConfig.MaxEventBridgeBodyBytes: must be between 1 and %d, got %d", MaxHTTPBodyBytes, c.MaxEventBridgeBodyBytes)
	}
	if s, ok := c.Token.(StaticSecret); ok {
		if err := CheckToken(s); err != nil {
			return fmt.Errorf("ingest: HTTPConfig.Token: %w", err)
		}
	}
	if s, ok := c.WebhookSecret.(StaticSecret); ok {
		if err := CheckWebhookSecret(s); err != nil {
			return fmt.Errorf("ingest: HTTPConfig.WebhookSecret: %w", err)
		}
	}
	wc := c.Webhook
	wc.Secret = make([]byte, MinWebhookSecretBytes) // given per request by WebhookSecret
	if err := wc.Validate(); err != nil {
		return err
	}
	return nil
}

// CheckToken reports a bearer token that is too short to be used.
func CheckToken(token []byte) error {
	if len(token) < MinTokenBytes {
		return fmt.Errorf("must be at least %d bytes, got %d", MinTokenBytes, len(token))
	}
	return nil
}

// HTTPHandler serves the ingest routes: the one handler behind both
// `streamfold serve` and the ingest Lambda's function URL.
//
//   - POST /webhooks/github: WebhookHandler (its answers are documented
//     there); 503 {"error":...} while WebhookSecret cannot be read.
//   - POST /events: CloudEvents (DecodeCloudEvents), bearer token.
//   - POST /eventbridge: one EventBridge Step Functions event through
//     StepFunctionsAdapter, bearer token.
//   - any other path: 404 {"error":...} naming the routes; another method
//     on a route: 405 with Allow: POST.
//
// Request errors are answered {"error":"..."}: 401 without or with a wrong
// bearer token (WWW-Authenticate: Bearer), 413 when the body exceeds the
// route's limit (checked before anything is decoded), 400 or 415 when the
// body is not what the route takes, 503 when the token cannot be read.
//
// Events are answered per event (EventResult): status accepted (202),
// duplicate (200: the same id with the same content is stored), rejected
// (400, with the fields at fault; a time more than the Appender's
// MaxFutureSkew ahead names "time"), too_large (413: its item exceeds
// DynamoDB's 400 KB even compressed, ErrTooLarge), conflict (409: the same
// subject and id is stored with different content, ErrConflict; both
// versions are kept in the dead letters), failed (503: retry; appends are
// idempotent) and, for /eventbridge, skipped (200: not an agent's state
// machine). A batch is answered with a BatchResult, one result per input
// event in input order, with status 200 when every event was stored
// (accepted or duplicate), 207 when some were rejected, too large or in
// conflict and none failed, and 503 when any failed.
//
// It is safe for concurrent use.
type HTTPHandler struct {
	cfg    HTTPConfig
	routes map[string]func(http.ResponseWriter, *http.Request) httpReply
	paths  []string

	mu          sync.Mutex
	hookSecret  []byte
	hook        *WebhookHandler
	tokenSecret []byte
	tokenHash   [sha256.Size]byte
}

// NewHTTPHandler returns the ingest handler; cfg is defaulted and validated.
func NewHTTPHandler(cfg HTTPConfig) (*HTTPHandler, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &HTTPHandler{cfg: cfg, routes: map[string]func(http.ResponseWriter, *http.Request) httpReply{}}
	if cfg.WebhookSecret != nil {
		h.routes[PathGitHubWebhook] = h.serveWebhook
		h.paths = append(h.paths, PathGitHubWebhook)
	}
	if cfg.Token != nil {
		h.routes[PathEvents] = h.serveEvents
		h.routes[PathEventBridge] = h.serveEventBridge
		h.paths = append(h.paths, PathEvents, PathEventBridge)
	}
	return h, nil
}

// Paths lists the paths the handler serves, for mounting it beside other
// handlers.
func (h *HTTPHandler) Paths() []string { return append([]string(nil), h.paths...) }

// httpReply is a route's answer: status, JSON body and the log line's fields.
// A zero reply means the route has answered already (the webhook).
type httpReply struct {
	status int
	body   any
	log    []slog.Attr
	err    error
}

// errorBody is the body of a request error.
type errorBody struct {
	Error string `json:"error"`
}

func requestError(status int, msg string, err error) httpReply {
	return httpReply{status: status, body: errorBody{Error: msg}, err: err}
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	route, ok := h.routes[r.URL.Path]
	var rep httpReply
	switch {
	case !ok:
		rep = requestError(http.StatusNotFound, "no such route: "+r.URL.Path+"; the ingest routes are POST "+strings.Join(h.paths, ", POST "), nil)
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		rep = requestError(http.StatusMethodNotAllowed, "method "+r.Method+" not allowed; use POST", nil)
	default:
		rep = route(w, r)
	}
	if rep.status == 0 {
		return // answered (and logged) by the webhook handler
	}
	writeJSON(w, rep.status, rep.body)

	level := slog.LevelInfo
	switch {
	case rep.status >= 500:
		level = slog.LevelError
	case rep.status >= 400:
		level = slog.LevelWarn
	}
	attrs := append([]slog.Attr{
		slog.String("path", r.URL.Path),
		slog.Int("status", rep.status),
		slog.Duration("duration", time.Since(start)),
	}, rep.log...)
	if rep.err != nil {
		attrs = append(attrs, slog.String("error", rep.err.Error()))
	}
	h.cfg.Log.LogAttrs(r.Context(), level, "ingest request", attrs...)
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// serveWebhook hands the request to the WebhookHandler of the current
// secret.
func (h *HTTPHandler) serveWebhook(w http.ResponseWriter, r *http.Request) httpReply {
	secret, err := h.cfg.WebhookSecret.Secret(r.Context())
	if err == nil && len(secret) == 0 {
		err = errors.New("the webhook secret is empty")
	}
	if err != nil {
		return requestError(http.StatusServiceUnavailable, "webhook secret unavailable; redeliver later", err)
	}
	hook, err := h.webhook(secret)
	if err != nil {
		return requestError(http.StatusServiceUnavailable, "webhook secret unavailable; redeliver later", err)
	}
	hook.ServeHTTP(w, r)
	return httpReply{}
}

// webhook returns the WebhookHandler for secret, building it when the
// secret changed.
func (h *HTTPHandler) webhook(secret []byte) (*WebhookHandler, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hook != nil && bytes.Equal(h.hookSecret, secret) {
		return h.hook, nil
	}
	cfg := h.cfg.Webhook
	cfg.Secret = secret
	hook, err := NewWebhookHandler(h.cfg.Appender, cfg, h.cfg.Log)
	if err != nil {
		return nil, err
	}
	h.hook, h.hookSecret = hook, bytes.Clone(secret)
	return hook, nil
}

// authorize checks the bearer token; it returns a zero reply when the
// request may go on.
func (h *HTTPHandler) authorize(w http.ResponseWriter, r *http.Request) httpReply {
	token, err := h.cfg.Token.Secret(r.Context())
	if err == nil {
		if cerr := CheckToken(token); cerr != nil {
			err = fmt.Errorf("ingest token: %w", cerr)
		}
	}
	if err != nil {
		return requestError(http.StatusServiceUnavailable, "ingest token unavailable; retry later", err)
	}
	want := h.hashToken(token)
	scheme, given, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(given) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamfold ingest"`)
		return requestError(http.StatusUnauthorized, "a bearer token is required: Authorization: Bearer <token>", nil)
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(given)))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="streamfold ingest", error="invalid_token"`)
		return requestError(http.StatusUnauthorized, "the bearer token does not match", nil)
	}
	return httpReply{}
}

// hashToken returns the SHA-256 of token, remembered for the last token.
// Hashes make the comparison constant-time whatever the lengths.
func (h *HTTPHandler) hashToken(token []byte) [sha256.Size]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !bytes.Equal(h.tokenSecret, token) {
		h.tokenSecret, h.tokenHash = bytes.Clone(token), sha256.Sum256(token)
	}
	return h.tokenHash
}

// readBody reads at most limit bytes of the body; tooLarge reports a body
// (or a Content-Length) above it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, tooLarge bool, err error) {
	if r.ContentLength > limit {
		return nil, true, nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, true, nil
	}
	return b, false, err
}

func tooLargeBody(limit int64, route, hint string) httpReply {
	return requestError(http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes, the limit of POST %s%s", limit, route, hint), nil)
}

// EventResult is the answer for one event.
type EventResult struct {
	// Status is accepted, duplicate, rejected, too_large, failed or (POST
	// /eventbridge only) skipped.
	Status string `json:"status"`
	// ID and Subject are the event's, as stored (id derived when the event
	// had none); for a rejected event, what it was sent with.
	ID      string `json:"id,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Error says why the event was not stored (rejected, too_large,
	// failed) or, for skipped, why nothing was to be stored.
	Error string `json:"error,omitempty"`
	// Fields lists, for a rejected event, each attribute or data field at
	// fault.
	Fields []FieldProblem `json:"fields,omitempty"`
	// Ignored lists the attributes that were read but not stored
	// (CloudEvent.Ignored).
	Ignored []string `json:"ignored,omitempty"`
}

// FieldProblem is one broken rule of a rejected event (schema.FieldError).
type FieldProblem struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// Event statuses.
const (
	StatusAccepted  = "accepted"
	StatusDuplicate = "duplicate"
	StatusRejected  = "rejected"
	StatusTooLarge  = "too_large"
	StatusFailed    = "failed"
	StatusSkipped   = "skipped"
	// StatusConflict: the event's (subject, id) is stored with different
	// content (ErrConflict); nothing was written, both versions are kept in
	// the dead letters.
	StatusConflict = "conflict"
)

// BatchResult is the answer to a batched request.
type BatchResult struct {
	// Counts by status.
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	TooLarge   int `json:"tooLarge"`
	Conflicts  int `json:"conflicts"`
	Failed     int `json:"failed"`
	// Results holds one result per input event, in input order.
	Results []EventResult `json:"results"`
}

// statusCode is the HTTP status of a single event's result.
func statusCode(status string) int {
	switch status {
	case StatusAccepted:
		return http.StatusAccepted
	case StatusDuplicate, StatusSkipped:
		return http.StatusOK
	case StatusRejected:
		return http.StatusBadRequest
	case StatusTooLarge:
		return http.StatusRequestEntityTooLarge
	case StatusConflict:
		return http.StatusConflict
	}
	return http.StatusServiceUnavailable
}

// rejected is the result of an event that can never be stored: too_large
// for ErrTooLarge, conflict for ErrConflict, rejected otherwise, with the
// fields of a *schema.ValidationError.
func rejected(id, subject string, err error) EventResult {
	res := EventResult{Status: StatusRejected, ID: id, Subject: subject, Error: strings.TrimPrefix(err.Error(), "ingest: ")}
	switch {
	case errors.Is(err, ErrTooLarge):
		res.Status = StatusTooLarge
		return res
	case errors.Is(err, ErrConflict):
		res.Status = StatusConflict
		return res
	}
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			res.Fields = append(res.Fields, FieldProblem{Field: fe.Field, Rule: fe.Rule})
		}
	}
	return res
}

// appendResults appends the events that decoded and fills their results.
// results has one entry per decoded event; the others are set already.
func (h *HTTPHandler) appendResults(ctx context.Context, evs []CloudEvent, results []EventResult) error {
	var batch []schema.Event
	var at []int
	for i, ev := range evs {
		if ev.Err != nil {
			results[i] = rejected(ev.Event.ID, ev.Event.Subject, ev.Err)
			results[i].Ignored = ev.Ignored
			continue
		}
		results[i] = EventResult{ID: ev.Event.ID, Subject: ev.Event.Subject, Ignored: ev.Ignored}
		batch = append(batch, ev.Event)
		at = append(at, i)
	}
	if len(batch) == 0 {
		return nil
	}
	res, err := h.cfg.Appender.Append(ctx, batch)
	for j, i := range at {
		out, oerr := Failed, err
		if j < len(res.Outcomes) {
			out = res.Outcomes[j]
			if j < len(res.Errors) && res.Errors[j] != nil {
				oerr = res.Errors[j]
			}
		}
		switch out {
		case Accepted:
			results[i].Status = StatusAccepted
		case Duplicate:
			results[i].Status = StatusDuplicate
		case Rejected, Conflict:
			if oerr == nil {
				oerr = errors.New("rejected by the appender")
			}
			r := rejected(results[i].ID, results[i].Subject, oerr)
			r.Ignored = results[i].Ignored
			results[i] = r
		default:
			results[i].Status = StatusFailed
			results[i].Error = "event not stored; retry later"
		}
	}
	return err
}

// authorizedBody authorizes a request and reads its body of at most limit
// bytes; a reply with a status is the error to send instead (401, 413 with
// hint after the limit, 400).
func (h *HTTPHandler) authorizedBody(w http.ResponseWriter, r *http.Request, limit int64, path, hint string) ([]byte, httpReply) {
	if rep := h.authorize(w, r); rep.status != 0 {
		return nil, rep
	}
	body, tooLarge, err := readBody(w, r, limit)
	switch {
	case tooLarge:
		return nil, tooLargeBody(limit, path, hint)
	case err != nil:
		return nil, requestError(http.StatusBadRequest, "could not read the body", err)
	}
	return body, httpReply{}
}

// serveEvents is POST /events.
func (h *HTTPHandler) serveEvents(w http.ResponseWriter, r *http.Request) httpReply {
	body, rep := h.authorizedBody(w, r, h.cfg.MaxEventsBodyBytes, PathEvents, "; send fewer events per batch")
	if rep.status != 0 {
		return rep
	}
	mode, evs, err := DecodeCloudEvents(r.Header, body)
	switch {
	case errors.Is(err, ErrUnsupportedEventFormat):
		return requestError(http.StatusUnsupportedMediaType, strings.TrimPrefix(err.Error(), "ingest: "), err)
	case err != nil:
		return requestError(http.StatusBadRequest, strings.TrimPrefix(err.Error(), "ingest: "), err)
	case len(evs) > h.cfg.MaxBatchEvents:
		return requestError(http.StatusRequestEntityTooLarge, fmt.Sprintf("the batch holds %d events; at most %d are taken per request", len(evs), h.cfg.MaxBatchEvents), nil)
	}
	results := make([]EventResult, len(evs))
	aerr := h.appendResults(r.Context(), evs, results)
	logAttrs := []slog.Attr{slog.String("mode", mode.String())}
	if mode != ModeBatch {
		res := results[0]
		logAttrs = append(logAttrs, slog.String("id", res.ID), slog.String("outcome", res.Status))
		rep := httpReply{status: statusCode(res.Status), body: res, log: logAttrs}
		if res.Status != StatusAccepted && res.Status != StatusDuplicate {
			rep.err = errors.New(res.Error)
			if aerr != nil {
				rep.err = aerr
			}
		}
		return rep
	}
	b := BatchResult{Results: results}
	for _, res := range results {
		switch res.Status {
		case StatusAccepted:
			b.Accepted++
		case StatusDuplicate:
			b.Duplicates++
		case StatusRejected:
			b.Rejected++
		case StatusTooLarge:
			b.TooLarge++
		case StatusConflict:
			b.Conflicts++
		default:
			b.Failed++
		}
	}
	status := http.StatusOK
	switch {
	case b.Failed > 0:
		status = http.StatusServiceUnavailable
	case b.Rejected+b.TooLarge+b.Conflicts > 0:
		status = http.StatusMultiStatus
	}
	logAttrs = append(logAttrs, slog.Int("events", len(results)), slog.Int("accepted", b.Accepted), slog.Int("duplicates", b.Duplicates),
		slog.Int("rejected", b.Rejected), slog.Int("tooLarge", b.TooLarge), slog.Int("conflicts", b.Conflicts), slog.Int("failed", b.Failed))
	return httpReply{status: status, body: b, log: logAttrs, err: aerr}
}

// serveEventBridge is POST /eventbridge.
func (h *HTTPHandler) serveEventBridge(w http.ResponseWriter, r *http.Request) httpReply {
	body, rep := h.authorizedBody(w, r, h.cfg.MaxEventBridgeBodyBytes, PathEventBridge, "")
	if rep.status != 0 {
		return rep
	}
	var ev EventBridgeEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return requestError(http.StatusBadRequest, "body: not an EventBridge event: "+jsonText(err), err)
	}
	res, err := h.stepFunctionsEvent(r.Context(), ev)
	return httpReply{status: statusCode(res.Status), body: res, log: []slog.Attr{slog.String("id", ev.ID), slog.String("outcome", res.Status)}, err: err}
}

// stepFunctionsEvent runs one EventBridge event through the adapter with
// the request's tags.
func (h *HTTPHandler) stepFunctionsEvent(ctx context.Context, ev EventBridgeEvent) (EventResult, error) {
	tags := requestTags{next: h.cfg.StepFunctionsTags}
	var d struct {
		Arn  string          `json:"stateMachineArn"`
		Tags json.RawMessage `json:"stateMachineTags"`
	}
	_ = json.Unmarshal(ev.Detail, &d) // the adapter reports a bad detail
	if h.cfg.DetailTags {
		if d.Tags != nil && !bytes.Equal(d.Tags, []byte("null")) {
			if err := json.Unmarshal(d.Tags, &tags.detail); err != nil {
				err = &schema.ValidationError{Errors: []*schema.FieldError{{Field: "detail.stateMachineTags", Rule: "must be an object of strings (tag key to value)"}}}
				return rejected(ev.ID, "", err), err
			}
			tags.fromDetail = true
		}
	}
	rec := &capturingAppender{next: h.cfg.Appender}
	out, err := NewStepFunctionsAdapter(rec, tags, h.cfg.Log, WithPayloadPolicy(h.cfg.StepFunctionsPayloads)).Handle(ctx, ev)
	e := rec.last()
	switch {
	case err != nil && isPermanent(err):
		return detailFields(rejected(ev.ID, e.Subject, err)), err
	case err != nil:
		return EventResult{Status: StatusFailed, ID: ev.ID, Subject: e.Subject, Error: "event not stored; retry later"}, err
	case out == Appended:
		return EventResult{Status: StatusAccepted, ID: e.ID, Subject: e.Subject}, nil
	case out == AlreadyAppended:
		return EventResult{Status: StatusDuplicate, ID: e.ID, Subject: e.Subject}, nil
	}
	where := "the Step Functions tag source"
	switch {
	case tags.fromDetail:
		where = "the event's detail.stateMachineTags"
	case h.cfg.StepFunctionsTags == nil && h.cfg.DetailTags:
		where = "nowhere: the event has no detail.stateMachineTags and no other tag source is configured"
	case h.cfg.StepFunctionsTags == nil:
		where = "nowhere: no tag source is configured"
	}
	return EventResult{Status: StatusSkipped, ID: ev.ID, Error: fmt.Sprintf("state machine %s is not an agent, nothing stored: its tags (from %s) lack %s", d.Arn, where, agentTagsText())}, nil
}

// detailFields renames the data fields of a rejected Step Functions event to
// the EventBridge event's: the envelope's data is the event's detail.
func detailFields(res EventResult) EventResult {
	if len(res.Fields) == 0 {
		return res
	}
	msgs := make([]string, len(res.Fields))
	for i, f := range res.Fields {
		if f.Field == "data" || strings.HasPrefix(f.Field, "data.") {
			res.Fields[i].Field = "detail" + strings.TrimPrefix(f.Field, "data")
		}
		msgs[i] = res.Fields[i].Field + ": " + f.Rule
	}
	res.Error = strings.Join(msgs, "; ")
	return res
}

// agentTagsText renders schema.AgentTags as Key=Value, sorted.
func agentTagsText() string {
	parts := make([]string, 0, len(schema.AgentTags))
	for k, v := range schema.AgentTags {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, " and ")
}

// requestTags is the tag source of one POST /eventbridge request.
type requestTags struct {
	detail     map[string]string
	fromDetail bool
	next       TagSource
}

func (t requestTags) Tags(ctx context.Context, arn string) (map[string]string, error) {
	if t.fromDetail {
		return t.detail, nil
	}
	if t.next == nil {
		return nil, nil
	}
	return t.next.Tags(ctx, arn)
}

// capturingAppender remembers the last event it was given.
type capturingAppender struct {
	next EventAppender
	mu   sync.Mutex
	ev   schema.Event
}

func (a *capturingAppender) Append(ctx context.Context, events []schema.Event) (Result, error) {
	if len(events) > 0 {
		a.mu.Lock()
		a.ev = events[len(events)-1]
		a.mu.Unlock()
	}
	return a.next.Append(ctx, events)
}

func (a *capturingAppender) last() schema.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ev
}
