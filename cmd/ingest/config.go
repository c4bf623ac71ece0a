package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamfold/streamfold/schema"
)

// config is the function's configuration, read from the environment by
// configFromEnv (the only place that reads it).
type config struct {
	// Naming gives the event table's name (STREAMFOLD_PREFIX, STREAMFOLD_STAGE).
	Naming schema.Naming
	// SecretARN is the Secrets Manager secret holding the GitHub webhook
	// secret (GITHUB_WEBHOOK_SECRET_ARN). Required.
	SecretARN string
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
		DynamoDBEndpoint: getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
	}
}

// Validate names the first bad field.
func (c config) Validate() error {
	if err := c.Naming.Validate(); err != nil {
		return err
	}
	switch {
	case c.SecretARN == "":
		return errors.New("ingest: GITHUB_WEBHOOK_SECRET_ARN: is required (the Secrets Manager secret holding the GitHub webhook secret)")
	case !strings.HasPrefix(c.SecretARN, "arn:") || !strings.Contains(c.SecretARN, ":secretsmanager:"):
		return fmt.Errorf("ingest: GITHUB_WEBHOOK_SECRET_ARN: must be a Secrets Manager ARN (arn:...:secretsmanager:...), got %q", c.SecretARN)
	}
	return nil
}
