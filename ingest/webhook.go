package ingest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// DefaultWebhookMaxBodyBytes is the default WebhookConfig.MaxBodyBytes (1 MiB).
const DefaultWebhookMaxBodyBytes = 1 << 20

// MaxWebhookBodyBytes is the largest MaxBodyBytes accepted: GitHub caps
// webhook payloads at 25 MB.
const MaxWebhookBodyBytes = 25 << 20

// MinWebhookSecretBytes is the shortest webhook secret accepted. The HMAC
// is only as strong as the secret: GitHub asks for "a random string with
// high entropy"; `openssl rand -hex 20` gives 40 characters.
const MinWebhookSecretBytes = 16

// CheckWebhookSecret reports a webhook secret too short to be used.
func CheckWebhookSecret(secret []byte) error {
	if len(secret) < MinWebhookSecretBytes {
		return fmt.Errorf("must be at least %d bytes (a random string, e.g. openssl rand -hex 20), got %d", MinWebhookSecretBytes, len(secret))
	}
	return nil
}

// WebhookConfig configures a WebhookHandler.
type WebhookConfig struct {
	// Secret is the webhook secret that GitHub signs deliveries with.
	// Required, at least MinWebhookSecretBytes long.
	Secret []byte
	// MaxBodyBytes bounds a delivery's body; larger ones get 413. Default
	// 1 MiB; at most 25 MiB (GitHub never sends more).
	MaxBodyBytes int64
	// Now is the clock used when a payload carries no time. Default time.Now.
	Now func() time.Time
}

// SetDefaults fills zero fields with their defaults.
func (c *WebhookConfig) SetDefaults() {
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultWebhookMaxBodyBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate names the first bad field.
func (c WebhookConfig) Validate() error {
	switch {
	case len(c.Secret) == 0:
		return errors.New("ingest: WebhookConfig.Secret: is required")
	case CheckWebhookSecret(c.Secret) != nil:
		return fmt.Errorf("ingest: WebhookConfig.Secret: %w", CheckWebhookSecret(c.Secret))
	case c.MaxBodyBytes < 1 || c.MaxBodyBytes > MaxWebhookBodyBytes:
		return fmt.Errorf("ingest: WebhookConfig.MaxBodyBytes: must be between 1 and %d, got %d", MaxWebhookBodyBytes, c.MaxBodyBytes)
	case c.Now == nil:
		return errors.New("ingest: WebhookConfig.Now: is required (SetDefaults sets it)")
	}
	return nil
}

// WebhookHandler receives GitHub webhook deliveries and appends workflow_job
// events. It answers:
//
//   - 405 to anything but POST;
//   - 413 when the body exceeds MaxBodyBytes (checked before the signature);
//   - 401 when X-Hub-Signature-256 is missing, malformed or wrong;
//   - 200 {"status":"pong"} to a ping;
//   - 202 {"status":"ignored","event":...} to other event types;
//   - 400 {"error":...} to a delivery that is not a valid workflow_job event;
//   - 413 {"error":...} to one whose event can never be stored (ErrTooLarge:
//     its item, compressed, exceeds DynamoDB's 400 KB item limit), with the
//     sizes and the limit;
//   - 202 {"status":"accepted","id":...} when the event is appended,
//     200 {"status":"duplicate","id":...} when it was already there;
//   - 503 when the append fails, so that the delivery can be redelivered.
//
// It logs one line per request.
type WebhookHandler struct {
	appender EventAppender
	cfg      WebhookConfig
	log      *slog.Logger
}

// NewWebhookHandler returns a handler appending through a. cfg is defaulted
// and validated; a nil log discards.
func NewWebhookHandler(a EventAppender, cfg WebhookConfig, log *slog.Logger) (*WebhookHandler, error) {
	if a == nil {
		return nil, errors.New("ingest: NewWebhookHandler: appender is required")
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Secret = append([]byte(nil), cfg.Secret...)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &WebhookHandler{appender: a, cfg: cfg, log: log}, nil
}

// webhookReply is one response: its status, JSON body and log fields.
type webhookReply struct {
	status  int
	body    map[string]string
	outcome string // for the log line
	err     error  // for the log line; never sent to the client unless in body
}

func reply(status int, outcome string, kv ...string) webhookReply {
	body := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i]] = kv[i+1]
	}
	return webhookReply{status: status, body: body, outcome: outcome}
}

func errorReply(status int, outcome, msg string, err error) webhookReply {
	r := reply(status, outcome, "error", msg)
	r.err = err
	return r
}

// ServeHTTP implements http.Handler.
func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	delivery := r.Header.Get(HeaderGitHubDelivery)
	event := r.Header.Get(HeaderGitHubEvent)
	rep := h.serve(w, r, delivery, event)

	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(rep.status)
	_ = json.NewEncoder(w).Encode(rep.body)

	level := slog.LevelInfo
	switch {
	case rep.status >= 500:
		level = slog.LevelError
	case rep.status >= 400:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("delivery", delivery),
		slog.String("event", event),
		slog.String("outcome", rep.outcome),
		slog.Int("status", rep.status),
		slog.Duration("duration", time.Since(start)),
	}
	if rep.err != nil {
		attrs = append(attrs, slog.String("error", rep.err.Error()))
	}
	h.log.LogAttrs(r.Context(), level, "github webhook", attrs...)
}

func (h *WebhookHandler) serve(w http.ResponseWriter, r *http.Request, delivery, event string) webhookReply {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return errorReply(http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" not allowed; use POST", nil)
	}
	tooLarge := fmt.Sprintf("body exceeds %d bytes", h.cfg.MaxBodyBytes)
	if r.ContentLength > h.cfg.MaxBodyBytes {
		return errorReply(http.StatusRequestEntityTooLarge, "too_large", tooLarge, nil)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errorReply(http.StatusRequestEntityTooLarge, "too_large", tooLarge, nil)
		}
		return errorReply(http.StatusBadRequest, "unreadable", "could not read body", err)
	}
	if msg := h.checkSignature(r.Header.Get(HeaderHubSignature), body); msg != "" {
		return errorReply(http.StatusUnauthorized, "unauthorized", msg, nil)
	}

	e, err := FromGitHubDelivery(GitHubDelivery{
		Headers: map[string]string{HeaderGitHubEvent: event, HeaderGitHubDelivery: delivery},
		Body:    body,
	}, h.cfg.Now())
	switch {
	case errors.Is(err, ErrPing):
		return reply(http.StatusOK, "pong", "status", "pong")
	case errors.Is(err, ErrUnsupportedGitHubEvent):
		return reply(http.StatusAccepted, "ignored", "status", "ignored", "event", event)
	case errors.Is(err, ErrMissingHeader):
		return errorReply(http.StatusBadRequest, "invalid", strings.TrimPrefix(err.Error(), "ingest: "), err)
	case err != nil:
		return errorReply(http.StatusBadRequest, "invalid", err.Error(), err)
	}

	res, err := h.appender.Append(r.Context(), []schema.Event{e})
	if len(res.Outcomes) != 1 {
		if err == nil {
			err = fmt.Errorf("append returned %d outcomes for 1 event", len(res.Outcomes))
		}
		return errorReply(http.StatusServiceUnavailable, "failed", "event not stored; redeliver later", err)
	}
	outErr := err
	if len(res.Errors) == 1 && res.Errors[0] != nil {
		outErr = res.Errors[0]
	}
	switch res.Outcomes[0] {
	case Accepted:
		return reply(http.StatusAccepted, "accepted", "status", "accepted", "id", e.ID)
	case Duplicate:
		return reply(http.StatusOK, "duplicate", "status", "duplicate", "id", e.ID)
	case Rejected:
		msg := "event rejected"
		if outErr != nil {
			msg = outErr.Error()
		}
		if errors.Is(outErr, ErrTooLarge) {
			return errorReply(http.StatusRequestEntityTooLarge, "too_large", strings.TrimPrefix(msg, "ingest: "), outErr)
		}
		return errorReply(http.StatusBadRequest, "rejected", msg, outErr)
	case Conflict:
		msg := "event conflicts with the stored event of the same id"
		if outErr != nil {
			msg = strings.TrimPrefix(outErr.Error(), "ingest: ")
		}
		return errorReply(http.StatusConflict, "conflict", msg, outErr)
	default:
		if outErr == nil {
			outErr = fmt.Errorf("append outcome %s", res.Outcomes[0])
		}
		return errorReply(http.StatusServiceUnavailable, "failed", "event not stored; redeliver later", outErr)
	}
}

// checkSignature verifies "sha256=<hex HMAC-SHA256 of body>" in constant time.
// It returns "" when the signature is good and the client message otherwise.
func (h *WebhookHandler) checkSignature(header string, body []byte) string {
	if header == "" {
		return "missing " + HeaderHubSignature + " header"
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return "malformed " + HeaderHubSignature + " header; want sha256=<64 hex digits>"
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return "malformed " + HeaderHubSignature + " header; want sha256=<64 hex digits>"
	}
	mac := hmac.New(sha256.New, h.cfg.Secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return "signature does not match"
	}
	return ""
}
