package cmdline_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/streamfold/streamfold/internal/laptop/cmdline"
	"github.com/streamfold/streamfold/toolkit"
)

type cmd struct {
	Skew              time.Duration `default:"24h" sfenv:"TEST_SKEW" help:"How far ahead."`
	HeartbeatInterval time.Duration `default:"1s" help:"How often."`
	Chunk             int           `default:"10" help:"Events per call."`
}

func parse(t *testing.T, env map[string]string, args ...string) (*cmd, *kong.Context, error) {
	t.Helper()
	var c cmd
	p, err := kong.New(&c, kong.Resolvers(cmdline.EnvResolver(func(k string) string { return env[k] })), kong.ValueFormatter(cmdline.HelpValue))
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := p.Parse(args)
	return &c, kctx, err
}

func TestEnvResolver(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want time.Duration
		err  string
	}{
		{"default", nil, nil, 24 * time.Hour, ""},
		{"from the environment", map[string]string{"TEST_SKEW": "2h"}, nil, 2 * time.Hour, ""},
		{"the flag wins", map[string]string{"TEST_SKEW": "2h"}, []string{"--skew", "3h"}, 3 * time.Hour, ""},
		{"a bad value names the variable", map[string]string{"TEST_SKEW": "tomorrow"}, nil, 0, `TEST_SKEW="tomorrow" (from the environment): expected duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := parse(t, tt.env, tt.args...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || c.Skew != tt.want {
				t.Fatalf("Skew = %v, %v; want %v", c.Skew, err, tt.want)
			}
		})
	}
}

func TestWithFlagNames(t *testing.T) {
	_, kctx, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	aliases := map[string]string{"ChunkEvents": "chunk"}
	for _, tt := range []struct {
		field, want string
		code        int
	}{
		{"HeartbeatInterval", "run: --heartbeat-interval: must be positive", 2},
		{"ChunkEvents", "run: --chunk: must be positive", 2},
		{"Nowhere", "run: Options.Nowhere: must be positive", 3}, // no such flag: unchanged
	} {
		got := cmdline.WithFlagNames(kctx, toolkit.Invalid("run", tt.field, nil, "must be positive"), 2, aliases)
		if got.Error() != tt.want {
			t.Errorf("%s: %q, want %q", tt.field, got, tt.want)
		}
		if code, _ := cmdline.CodeOf(got, 3); code != tt.code {
			t.Errorf("%s: code %d, want %d", tt.field, code, tt.code)
		}
	}
}

func TestDashed(t *testing.T) {
	for in, want := range map[string]string{"HeartbeatInterval": "heartbeat-interval", "SFNTags": "sfn-tags", "GSIShards": "gsi-shards", "Token": "token", "DynamoDBEndpoint": "dynamo-db-endpoint"} {
		if got := cmdline.Dashed(in); got != want {
			t.Errorf("Dashed(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCodeOf(t *testing.T) {
	for _, tt := range []struct {
		err    error
		code   int
		silent bool
	}{
		{nil, 0, true},
		{cmdline.ExitStatus(1), 1, true},
		{cmdline.Fail(4, "conflict"), 4, false},
		{errors.New("plain"), 3, false},
	} {
		if code, silent := cmdline.CodeOf(tt.err, 3); code != tt.code || silent != tt.silent {
			t.Errorf("CodeOf(%v) = %d, %v; want %d, %v", tt.err, code, silent, tt.code, tt.silent)
		}
	}
}
