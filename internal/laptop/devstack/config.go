package devstack

import (
	"cmp"
	"net"
	"path/filepath"
	"strconv"
	"time"
)

// Defaults applied by Config.SetDefaults.
const (
	DefaultToolsDir     = ".tools"
	DefaultHost         = "127.0.0.1"
	DefaultDynamoDBPort = 8766
	DefaultS3Port       = 9766
	DefaultS3AccessKey  = "streamfold"
	DefaultS3SecretKey  = "streamfold-secret"
	DefaultStartTimeout = 60 * time.Second
)

// Config says where the tools are, where state goes and which loopback ports
// the services use. The zero value plus SetDefaults is the standard dev stack.
// Up, Down and Check apply SetDefaults to their own copy and then Validate it.
type Config struct {
	// ToolsDir is where `make tools` installed dynamodb-local/ and bin/minio.
	// Default ".tools" (relative to the working directory).
	ToolsDir string
	// StateDir holds pid files and service logs. Default ToolsDir+"/run".
	StateDir string
	// Host is the address the services are reached on (and MinIO binds to).
	// It must be a loopback address. Default "127.0.0.1".
	Host string
	// DynamoDBPort is DynamoDB Local's port. Default 8766.
	DynamoDBPort int
	// S3Port is MinIO's S3 API port; its console uses S3Port+1. Default 9766.
	S3Port int
	// S3AccessKey and S3SecretKey become MINIO_ROOT_USER / MINIO_ROOT_PASSWORD.
	// Defaults "streamfold" / "streamfold-secret". MinIO wants at least 3 and 8 characters.
	S3AccessKey, S3SecretKey string
	// DataDir is MinIO's data directory. Default StateDir+"/minio-data".
	DataDir string
	// StartTimeout bounds how long Up waits for a started service to answer. Default 60s.
	StartTimeout time.Duration
	// SkipMinIO makes Up leave MinIO alone (neither start nor wait for it):
	// the archive is then a local filesystem warehouse (archiver/s3fs).
	// Check and Down still report and stop a MinIO of StateDir.
	SkipMinIO bool
}

// SetDefaults fills every zero field with its default. Fields that depend on
// others (StateDir, DataDir) are derived after those are set.
func (c *Config) SetDefaults() {
	c.ToolsDir = cmp.Or(c.ToolsDir, DefaultToolsDir)
	c.StateDir = cmp.Or(c.StateDir, filepath.Join(c.ToolsDir, "run"))
	c.Host = cmp.Or(c.Host, DefaultHost)
	c.DynamoDBPort = cmp.Or(c.DynamoDBPort, DefaultDynamoDBPort)
	c.S3Port = cmp.Or(c.S3Port, DefaultS3Port)
	c.S3AccessKey = cmp.Or(c.S3AccessKey, DefaultS3AccessKey)
	c.S3SecretKey = cmp.Or(c.S3SecretKey, DefaultS3SecretKey)
	c.DataDir = cmp.Or(c.DataDir, filepath.Join(c.StateDir, "minio-data"))
	c.StartTimeout = cmp.Or(c.StartTimeout, DefaultStartTimeout)
}

// ConfigError is returned by Validate. Its message has the form
// "devstack: Config.FIELD: PROBLEM"; it wraps ErrInvalidConfig.
type ConfigError struct {
	Field   string
	Problem string
}

func (e *ConfigError) Error() string { return "devstack: Config." + e.Field + ": " + e.Problem }

// Unwrap makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// Validate reports the first invalid field as a *ConfigError, e.g.
// "devstack: Config.S3Port: must be between 1 and 65535". It does not apply
// defaults: call SetDefaults first (Up, Down and Check do).
func (c Config) Validate() error {
	bad := func(field, problem string) error { return &ConfigError{Field: field, Problem: problem} }
	switch {
	case c.ToolsDir == "":
		return bad("ToolsDir", "must not be empty")
	case c.StateDir == "":
		return bad("StateDir", "must not be empty")
	case c.DataDir == "":
		return bad("DataDir", "must not be empty")
	}
	if c.Host == "" {
		return bad("Host", "must not be empty")
	}
	if !isLoopback(c.Host) {
		return bad("Host", strconv.Quote(c.Host)+" is not a loopback address (use 127.0.0.1, ::1 or localhost)")
	}
	if c.DynamoDBPort < 1 || c.DynamoDBPort > 65535 {
		return bad("DynamoDBPort", "must be between 1 and 65535")
	}
	if c.S3Port < 1 || c.S3Port > 65535 {
		return bad("S3Port", "must be between 1 and 65535")
	}
	if c.S3Port == 65535 {
		return bad("S3Port", "must be at most 65534 (the MinIO console listens on S3Port+1)")
	}
	if c.DynamoDBPort == c.S3Port || c.DynamoDBPort == c.S3Port+1 {
		return bad("DynamoDBPort", "must differ from S3Port and S3Port+1 (MinIO console)")
	}
	if len(c.S3AccessKey) < 3 {
		return bad("S3AccessKey", "must be at least 3 characters (MinIO requirement)")
	}
	if len(c.S3SecretKey) < 8 {
		return bad("S3SecretKey", "must be at least 8 characters (MinIO requirement)")
	}
	if c.StartTimeout <= 0 {
		return bad("StartTimeout", "must be positive")
	}
	return nil
}

// isLoopback accepts "localhost" and IP literals in 127.0.0.0/8 or ::1. Host
// names other than localhost are rejected: they could resolve anywhere.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DynamoDBEndpoint is the URL clients use for DynamoDB Local, e.g. "http://127.0.0.1:8766".
func (c Config) DynamoDBEndpoint() string {
	return "http://" + net.JoinHostPort(c.Host, strconv.Itoa(c.DynamoDBPort))
}

// S3Endpoint is the URL clients use for MinIO (path-style), e.g. "http://127.0.0.1:9766".
func (c Config) S3Endpoint() string {
	return "http://" + net.JoinHostPort(c.Host, strconv.Itoa(c.S3Port))
}

// absolute returns a copy whose directories are absolute, so the command lines
// we start and record do not depend on the working directory.
func (c Config) absolute() (Config, error) {
	for _, p := range []*string{&c.ToolsDir, &c.StateDir, &c.DataDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return c, err
		}
		*p = abs
	}
	return c, nil
}
