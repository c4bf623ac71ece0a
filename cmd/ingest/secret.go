package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// ErrEmptySecret is returned, wrapped with the secret's ARN, when the secret
// has no value yet (Terraform creates it empty; the value is set out of
// band, see docs/deployment.md).
var ErrEmptySecret = errors.New("ingest: webhook secret is empty")

// secretGetter is the one Secrets Manager call the function makes;
// *secretsmanager.Client satisfies it.
type secretGetter interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// readSecret returns the current value of the secret: its SecretString
// without surrounding whitespace (a value set with `echo` keeps its newline),
// else its SecretBinary.
func readSecret(ctx context.Context, api secretGetter, arn string) ([]byte, error) {
	out, err := api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("ingest: read secret %s: %w", arn, err)
	}
	var v []byte
	if out.SecretString != nil {
		v = bytes.TrimSpace([]byte(*out.SecretString))
	} else {
		v = out.SecretBinary
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrEmptySecret, arn)
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
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "webhook secret unavailable; redeliver later"})
		return
	}
	h.ServeHTTP(w, r)
}
