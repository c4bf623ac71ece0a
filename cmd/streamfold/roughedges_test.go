package main

import (
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// TestMissingTableSaysWhichAndWhy: a command pointed at tables that do not
// exist (the prefix forgotten) names the table and says how tables are
// named.
func TestMissingTableSaysWhichAndWhy(t *testing.T) {
	testenv.Clients(t) // skips (or fails under STREAMFOLD_REQUIRE_SERVICES) without DynamoDB Local
	env := localEnv(schema.Naming{Prefix: "forgotten", Stage: "dev"})
	code, _, errOut := runCLI(t, env, "", "query", "messages", "--stage", "dev")
	if code != exitRuntime {
		t.Fatalf("exit %d, want %d:\n%s", code, exitRuntime, errOut)
	}
	for _, want := range []string{"table forgotten-dev-messages does not exist", "hint: tables are named PREFIX-STAGE-NAME", "STREAMFOLD_PREFIX"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestNoAWSFailsFast: with no local endpoint, no region or no credentials,
// a command fails at once, saying what is missing and how to use the local
// stack, instead of retrying the instance metadata service.
func TestNoAWSFailsFast(t *testing.T) {
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no region", []string{"query", "messages", "--stage", "dev"}, "no AWS region"},
		{"no credentials", []string{"query", "messages", "--stage", "dev", "--region", "us-east-1"}, "no AWS credentials found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, map[string]string{}, "", tt.args...)
			if code != exitRuntime {
				t.Fatalf("exit %d, want %d:\n%s", code, exitRuntime, errOut)
			}
			for _, want := range []string{tt.want, "streamfold dev up", "STREAMFOLD_DYNAMODB_ENDPOINT"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
}
