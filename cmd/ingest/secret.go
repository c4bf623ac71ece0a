package main

import (
	"context"
	"fmt"
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

// readSecret returns the current value of a secret (awsclient.SecretValue).
func readSecret(ctx context.Context, api secretGetter, arn string) ([]byte, error) {
	v, err := awsclient.SecretValue(ctx, api, arn)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return v, nil
}

// cachedSecret is an ingest.Secret read from Secrets Manager on first use
// and kept once read. Reading can fail (the value is not set yet,
// throttling): then the request that needed it gets 503 and the next one
// reads again, so that setting a secret after a deploy needs no restart.
// A new value is picked up on the next cold start. It is safe for
// concurrent use.
type cachedSecret struct {
	api secretGetter
	arn string

	mu    sync.Mutex
	value []byte
}

// Secret implements ingest.Secret.
func (c *cachedSecret) Secret(ctx context.Context) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value != nil {
		return c.value, nil
	}
	v, err := readSecret(ctx, c.api, c.arn)
	if err != nil {
		return nil, err
	}
	c.value = v
	return v, nil
}
