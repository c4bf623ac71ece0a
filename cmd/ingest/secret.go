package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/streamfold/streamfold/internal/awsclient"
)

// ErrEmptySecret is wrapped, with the secret's ARN, when the secret has no
// value yet (Terraform creates it empty; the value is set out of band, see
// docs/deployment.md).
var ErrEmptySecret = awsclient.ErrEmptySecret

// secretGetter is the one Secrets Manager call the function makes;
// *secretsmanager.Client satisfies it.
type secretGetter = awsclient.SecretGetter

// readSecret returns the current value of the webhook secret
// (awsclient.SecretValue).
func readSecret(ctx context.Context, api secretGetter, arn string) ([]byte, error) {
	v, err := awsclient.SecretValue(ctx, api, arn)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return v, nil
}

// lazyHandler builds its http.Handler on first use and keeps it once built.
// The webhook handler needs the secret; reading it can fail (not set yet,
// throttled), and then the request gets 503 and the next request tries
// again, so that setting the secret after a deploy needs no restart.
// EventBridge invocations never touch it. It is safe for concurrent use.
type lazyHandler struct {
	build func(ctx context.Context) (http.Handler, error)
	log   *slog.Logger

	mu sync.Mutex
	h  http.Handler
}

// get returns the handler, building it if needed.
func (l *lazyHandler) get(ctx context.Context) (http.Handler, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		return l.h, nil
	}
	h, err := l.build(ctx)
	if err != nil {
		return nil, err
	}
	l.h = h
	return h, nil
}

// ServeHTTP implements http.Handler.
func (l *lazyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, err := l.get(r.Context())
	if err != nil {
		l.log.ErrorContext(r.Context(), "github webhook", "outcome", "unavailable", "status", http.StatusServiceUnavailable, "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "webhook secret unavailable; redeliver later")
		return
	}
	h.ServeHTTP(w, r)
}
