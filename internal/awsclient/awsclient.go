// Package awsclient builds the AWS SDK clients streamfold uses, pointed at
// AWS or, when endpoints are given, at local DynamoDB Local and MinIO. It
// reads no environment itself: cmd/ and tests pass the settings in.
package awsclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/internal/capacity"
)

// Config says where the clients connect.
type Config struct {
	// Region defaults to us-east-1 when an endpoint is set and nothing else says.
	Region string
	// DynamoDBEndpoint, when set, is used for DynamoDB and DynamoDB Streams
	// (e.g. http://127.0.0.1:8766); empty means AWS.
	DynamoDBEndpoint string
	// S3Endpoint, when set, is used with path-style addressing (MinIO); empty means AWS.
	S3Endpoint string
	// AccessKey and SecretKey are static credentials for local endpoints. With
	// an endpoint set and no keys, "local"/"local" is used for DynamoDB.
	AccessKey, SecretKey string
	// S3AccessKey and S3SecretKey override the keys for S3 (MinIO's root user).
	S3AccessKey, S3SecretKey string
}

// Validate checks that endpoints are absolute URLs.
func (c Config) Validate() error {
	for name, ep := range map[string]string{"DynamoDBEndpoint": c.DynamoDBEndpoint, "S3Endpoint": c.S3Endpoint} {
		if ep == "" {
			continue
		}
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("awsclient: Config.%s: must be an http(s) URL, got %q", name, ep)
		}
	}
	return nil
}

// Clients are the SDK clients of one configuration.
type Clients struct {
	DynamoDB *dynamodb.Client
	Streams  *dynamodbstreams.Client
	S3       *s3.Client
	AWS      aws.Config
}

// MeteredDynamoDB returns a DynamoDB client with c.DynamoDB's configuration
// (endpoint, credentials, retries; it shares its HTTP connections) whose
// calls ask for their consumed capacity and record it in m (see
// capacity.WithMeter). Give each consumer its own Meter to see what each
// costs.
func (c *Clients) MeteredDynamoDB(m *capacity.Meter) *dynamodb.Client {
	return dynamodb.New(c.DynamoDB.Options(), capacity.WithMeter(m))
}

// New loads the default AWS configuration (environment, shared files, IAM
// role) and applies the local overrides.
func New(ctx context.Context, c Config) (*Clients, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var opts []func(*config.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, config.WithRegion(c.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("awsclient: load AWS config: %w", err)
	}
	if cfg.Region == "" && (c.DynamoDBEndpoint != "" || c.S3Endpoint != "") {
		cfg.Region = "us-east-1"
	}
	static := func(ak, sk string) aws.CredentialsProvider {
		return credentials.NewStaticCredentialsProvider(ak, sk, "")
	}
	out := &Clients{AWS: cfg}
	out.DynamoDB = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, nameMissingTables)
		if c.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(c.DynamoDBEndpoint)
			o.Credentials = static(or(c.AccessKey, "local"), or(c.SecretKey, "local"))
			// DynamoDB Local's x-amz-crc32 does not always match its
			// (re-encoded) body; the SDK then logs a warning per response.
			o.DisableValidateResponseChecksum = true
		}
	})
	out.Streams = dynamodbstreams.NewFromConfig(cfg, func(o *dynamodbstreams.Options) {
		if c.DynamoDBEndpoint != "" {
			o.BaseEndpoint = aws.String(c.DynamoDBEndpoint)
			o.Credentials = static(or(c.AccessKey, "local"), or(c.SecretKey, "local"))
		}
	})
	out.S3 = s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.S3Endpoint != "" {
			o.BaseEndpoint = aws.String(c.S3Endpoint)
			o.UsePathStyle = true
			o.Credentials = static(or(c.S3AccessKey, or(c.AccessKey, "local")), or(c.S3SecretKey, or(c.SecretKey, "local")))
		}
	})
	return out, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
