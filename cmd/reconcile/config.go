package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
)

// DefaultWindow is how far back a run checks when neither the event nor
// RECONCILE_WINDOW says: a day plus two hours, so that daily runs overlap.
const DefaultWindow = 26 * time.Hour

// settings is the function's configuration, read from the environment at
// cold start.
type settings struct {
	naming  schema.Naming
	archive archiver.Config
	// window is the default window (RECONCILE_WINDOW), heal the default
	// and the permission to heal (RECONCILE_HEAL): Terraform grants the
	// role the projector's and archiver's writes only when it is true.
	window time.Duration
	heal   bool
	client awsclient.Config
	// gsiShards is the projector's write sharding (STREAMFOLD_GSI_SHARDS):
	// healing writes items as the projector does.
	gsiShards int
}

// deployment is the metrics' Deployment dimension, "<prefix>-<stage>"
// (Terraform's local.name, which the alarms use).
func (s settings) deployment() string { return s.naming.Prefix + "-" + s.naming.Stage }

// load reads the environment. Errors name the variable. Unlike the stream
// consumers, the function has no default tables: it must check the
// deployment Terraform names, never "streamfold-dev" by accident.
func load(getenv func(string) string) (settings, error) {
	s := settings{
		naming: schema.Naming{Prefix: getenv("STREAMFOLD_PREFIX"), Stage: getenv("STREAMFOLD_STAGE")},
		window: DefaultWindow,
		client: clientConfig(getenv),
	}
	if s.naming.Prefix == "" || s.naming.Stage == "" {
		return s, errors.New("STREAMFOLD_PREFIX and STREAMFOLD_STAGE are required: the tables to reconcile")
	}
	if err := s.naming.Validate(); err != nil {
		return s, err
	}
	a, err := archiver.ConfigFromEnv(getenv)
	if err != nil {
		return s, err
	}
	s.archive = a
	if v := getenv("RECONCILE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("RECONCILE_WINDOW=%q: want a positive duration such as 26h", v)
		}
		s.window = d
	}
	if s.gsiShards, err = schema.ParseGSIShards(getenv("STREAMFOLD_GSI_SHARDS")); err != nil {
		return s, err
	}
	if v := getenv("RECONCILE_HEAL"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return s, fmt.Errorf("RECONCILE_HEAL=%q: want true or false", v)
		}
		s.heal = b
	}
	return s, nil
}

// clientConfig is the AWS client configuration: empty in AWS (the SDK's
// defaults, the execution role); endpoint overrides for tests that run the
// built function against DynamoDB Local and MinIO (internal/laptop/lambdatier).
// The keys are used only together with STREAMFOLD_S3_ENDPOINT.
func clientConfig(getenv func(string) string) awsclient.Config {
	return awsclient.Config{
		S3Endpoint:       getenv("STREAMFOLD_S3_ENDPOINT"),
		S3AccessKey:      getenv("STREAMFOLD_S3_ACCESS_KEY"),
		S3SecretKey:      getenv("STREAMFOLD_S3_SECRET_KEY"),
		DynamoDBEndpoint: getenv("STREAMFOLD_DYNAMODB_ENDPOINT"),
	}
}
