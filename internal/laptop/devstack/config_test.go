package devstack

import (
	"errors"
	"testing"
	"time"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{
			name: "zero value",
			in:   Config{},
			want: Config{
				ToolsDir: ".tools", StateDir: ".tools/run", Host: "127.0.0.1",
				DynamoDBPort: 8766, S3Port: 9766,
				S3AccessKey: "streamfold", S3SecretKey: "streamfold-secret",
				DataDir: ".tools/run/minio-data", StartTimeout: 60 * time.Second,
			},
		},
		{
			name: "derived dirs follow ToolsDir",
			in:   Config{ToolsDir: "/opt/t"},
			want: Config{
				ToolsDir: "/opt/t", StateDir: "/opt/t/run", Host: "127.0.0.1",
				DynamoDBPort: 8766, S3Port: 9766,
				S3AccessKey: "streamfold", S3SecretKey: "streamfold-secret",
				DataDir: "/opt/t/run/minio-data", StartTimeout: 60 * time.Second,
			},
		},
		{
			name: "DataDir follows StateDir; set fields are kept",
			in: Config{
				StateDir: "/s", Host: "::1", DynamoDBPort: 1, S3Port: 2,
				S3AccessKey: "ak", S3SecretKey: "sk", StartTimeout: time.Second,
			},
			want: Config{
				ToolsDir: ".tools", StateDir: "/s", Host: "::1",
				DynamoDBPort: 1, S3Port: 2, S3AccessKey: "ak", S3SecretKey: "sk",
				DataDir: "/s/minio-data", StartTimeout: time.Second,
			},
		},
		{
			name: "explicit DataDir kept",
			in:   Config{DataDir: "/d"},
			want: Config{
				ToolsDir: ".tools", StateDir: ".tools/run", Host: "127.0.0.1",
				DynamoDBPort: 8766, S3Port: 9766,
				S3AccessKey: "streamfold", S3SecretKey: "streamfold-secret",
				DataDir: "/d", StartTimeout: 60 * time.Second,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.SetDefaults()
			if got != tt.want {
				t.Errorf("SetDefaults:\n got  %+v\n want %+v", got, tt.want)
			}
			again := got
			again.SetDefaults()
			if again != got {
				t.Errorf("SetDefaults is not idempotent: %+v then %+v", got, again)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	valid := func(mod func(*Config)) Config {
		c := Config{}
		c.SetDefaults()
		mod(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string // "" means valid
	}{
		{"defaults", valid(func(*Config) {}), ""},
		{"ipv6 loopback", valid(func(c *Config) { c.Host = "::1" }), ""},
		{"localhost", valid(func(c *Config) { c.Host = "localhost" }), ""},
		{"other 127/8 address", valid(func(c *Config) { c.Host = "127.0.0.2" }), ""},
		{"max ports", valid(func(c *Config) { c.DynamoDBPort = 65535; c.S3Port = 65533 }), ""},
		{"zero value (no defaults)", Config{}, "devstack: Config.ToolsDir: must not be empty"},
		{"empty StateDir", valid(func(c *Config) { c.StateDir = "" }), "devstack: Config.StateDir: must not be empty"},
		{"empty DataDir", valid(func(c *Config) { c.DataDir = "" }), "devstack: Config.DataDir: must not be empty"},
		{"empty Host", valid(func(c *Config) { c.Host = "" }), "devstack: Config.Host: must not be empty"},
		{"all interfaces", valid(func(c *Config) { c.Host = "0.0.0.0" }),
			`devstack: Config.Host: "0.0.0.0" is not a loopback address (use 127.0.0.1, ::1 or localhost)`},
		{"private address", valid(func(c *Config) { c.Host = "192.168.1.10" }),
			`devstack: Config.Host: "192.168.1.10" is not a loopback address (use 127.0.0.1, ::1 or localhost)`},
		{"host name", valid(func(c *Config) { c.Host = "example.com" }),
			`devstack: Config.Host: "example.com" is not a loopback address (use 127.0.0.1, ::1 or localhost)`},
		{"DynamoDBPort negative", valid(func(c *Config) { c.DynamoDBPort = -1 }), "devstack: Config.DynamoDBPort: must be between 1 and 65535"},
		{"DynamoDBPort too big", valid(func(c *Config) { c.DynamoDBPort = 65536 }), "devstack: Config.DynamoDBPort: must be between 1 and 65535"},
		{"S3Port zero", valid(func(c *Config) { c.S3Port = 0 }), "devstack: Config.S3Port: must be between 1 and 65535"},
		{"S3Port too big", valid(func(c *Config) { c.S3Port = 70000 }), "devstack: Config.S3Port: must be between 1 and 65535"},
		{"S3Port leaves no console port", valid(func(c *Config) { c.S3Port = 65535 }),
			"devstack: Config.S3Port: must be at most 65534 (the MinIO console listens on S3Port+1)"},
		{"same ports", valid(func(c *Config) { c.DynamoDBPort = 9766 }),
			"devstack: Config.DynamoDBPort: must differ from S3Port and S3Port+1 (MinIO console)"},
		{"DynamoDB on console port", valid(func(c *Config) { c.DynamoDBPort = 9767 }),
			"devstack: Config.DynamoDBPort: must differ from S3Port and S3Port+1 (MinIO console)"},
		{"short access key", valid(func(c *Config) { c.S3AccessKey = "ab" }),
			"devstack: Config.S3AccessKey: must be at least 3 characters (MinIO requirement)"},
		{"short secret", valid(func(c *Config) { c.S3SecretKey = "1234567" }),
			"devstack: Config.S3SecretKey: must be at least 8 characters (MinIO requirement)"},
		{"negative timeout", valid(func(c *Config) { c.StartTimeout = -time.Second }), "devstack: Config.StartTimeout: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Validate() = %q\n                want %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("errors.Is(%v, ErrInvalidConfig) = false", err)
			}
		})
	}
}

func TestEndpoints(t *testing.T) {
	c := Config{}
	c.SetDefaults()
	if got, want := c.DynamoDBEndpoint(), "http://127.0.0.1:8766"; got != want {
		t.Errorf("DynamoDBEndpoint() = %q, want %q", got, want)
	}
	if got, want := c.S3Endpoint(), "http://127.0.0.1:9766"; got != want {
		t.Errorf("S3Endpoint() = %q, want %q", got, want)
	}
	c.Host = "::1"
	if got, want := c.S3Endpoint(), "http://[::1]:9766"; got != want {
		t.Errorf("S3Endpoint() with ::1 = %q, want %q", got, want)
	}
}
