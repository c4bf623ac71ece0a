package main

import (
	"fmt"
	"strings"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/schema"
)

// config is the function's configuration, read from the environment by
// configFromEnv (the only place that reads it).
type config struct {
	// Naming gives the event and dead-letter tables' names
	// (STREAMFOLD_PREFIX, STREAMFOLD_STAGE).
	Naming schema.Naming
	// SecretARN is the Secrets Manager secret holding the GitHub webhook
	// secret (GITHUB_WEBHOOK_SECRET_ARN). Required.
	SecretARN string
	// TokenSecretARN is the Secrets Manager secret holding the bearer token
	// of POST /events and POST /eventbridge
	// (STREAMFOLD_INGEST_TOKEN_SECRET_ARN). Required.
	TokenSecretARN string
	// SFNPayloads is what becomes of a Step Functions execution's input,
	// output and cause (STREAMFOLD_SFN_PAYLOADS: hash, drop or keep;
	// default hash).
	SFNPayloads ingest.PayloadPolicy
	// DynamoDBEndpoint overrides the DynamoDB endpoint (tests only).
	DynamoDBEndpoint string
}

// configFromEnv reads the configuration; defaults: prefix "streamfold",
// stage "dev".
func configFromEnv(getenv func(string) string) config {
	or := func(k, d string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return d
	}
	return config{
		Naming:           schema.Naming{Prefix: or("STREAMFOLD_PREFIX", "streamfold"), Stage: or("STREAMFOLD_STAGE", "dev")},
		SecretARN:        getenv("GITHUB_WEBHOOK_SECRET_ARN"),
		TokenSecretARN:   getenv("STREAMFOLD_INGEST_TOKEN_SECRET_ARN"),
		SFNPayloads:      ingest.PayloadPolicy(getenv("STREAMFOLD_SFN_PAYLOADS")),
		DynamoDBEndpoint: getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
	}
}

// Validate names the first bad field.
func (c config) Validate() error {
	if err := c.Naming.Validate(); err != nil {
		return err
	}
	if err := secretARN("GITHUB_WEBHOOK_SECRET_ARN", c.SecretARN, "the GitHub webhook secret"); err != nil {
		return err
	}
	if _, err := ingest.ParsePayloadPolicy(string(c.SFNPayloads)); err != nil {
		return fmt.Errorf("ingest: STREAMFOLD_SFN_PAYLOADS: %w", err)
	}
	return secretARN("STREAMFOLD_INGEST_TOKEN_SECRET_ARN", c.TokenSecretARN, "the bearer token of POST /events and POST /eventbridge")
}

func secretARN(name, v, holds string) error {
	switch {
	case v == "":
		return fmt.Errorf("ingest: %s: is required (the Secrets Manager secret holding %s)", name, holds)
	case !strings.HasPrefix(v, "arn:") || !strings.Contains(v, ":secretsmanager:"):
		return fmt.Errorf("ingest: %s: must be a Secrets Manager ARN (arn:...:secretsmanager:...), got %q", name, v)
	}
	return nil
}
