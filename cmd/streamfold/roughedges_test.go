package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// TestEveryHelp: "CMD -h" and "CMD SUB -h" of every command exit 0 and
// print usable help: a "Flags:" heading always has flags under it, and no
// flag's argument name is a phrase (the flag package turns a `quoted`
// word of a usage text into the argument name).
func TestEveryHelp(t *testing.T) {
	subs := map[string][]string{
		"dev": {"up", "status", "down"}, "query": {"jobs", "messages", "run"},
		"deadletter": {"list", "replay", "redrive"}, "archive": {"ls", "compact", "register"},
		"events": {"summary", "list"}, "deploy": {"plan", "output"},
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range commands {
			if !yield(n) {
				return
			}
		}
	})
	argName := regexp.MustCompile(`(?m)^  -[a-z0-9-]+ (\S+ \S+)\n`)
	for _, name := range names {
		for _, args := range append([][]string{{name, "-h"}}, func() [][]string {
			var out [][]string
			for _, s := range subs[name] {
				out = append(out, []string{name, s, "-h"})
			}
			return out
		}()...) {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errOut := runCLI(t, nil, "", args...)
				help := out + errOut
				if code != exitOK {
					t.Fatalf("exit %d:\n%s", code, help)
				}
				if i := strings.Index(help, "Flags:\n"); i >= 0 && !strings.HasPrefix(help[i+len("Flags:\n"):], "  -") {
					t.Errorf("an empty Flags: section:\n%s", help)
				}
				if m := argName.FindStringSubmatch(help); m != nil {
					t.Errorf("a flag's argument is named %q (a `quoted` phrase in its usage):\n%s", m[1], help)
				}
			})
		}
	}
}

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
