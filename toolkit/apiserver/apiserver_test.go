package apiserver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string // "" is valid
	}{
		{"zero", Options{}, ""},
		{"given secrets", Options{Ingest: true, Token: "api-token-0123456789", CursorKey: "cursor-key-0123456789", IngestToken: "ingest-token-0123456789", WebhookSecret: "webhook-secret-0123"}, ""},
		{"short token", Options{Token: "short"}, "serve: Options.Token: must be at least 16 characters, got 5"},
		{"short cursor key", Options{CursorKey: "short"}, "serve: Options.CursorKey: must be at least 16 bytes, got 5"},
		{"page size", Options{MaxPageSize: 500}, "serve: Options.MaxPageSize: must be between 0 (default) and 200, got 500"},
		{"short ingest token", Options{Ingest: true, IngestToken: "short"}, "serve: Options.IngestToken: must be at least 16 bytes, got 5"},
		{"short ingest token, no ingest", Options{IngestToken: "short"}, ""},
		{"short webhook secret", Options{Ingest: true, WebhookSecret: "mysecret"}, "serve: Options.WebhookSecret: must be at least 16 bytes"},
		{"payloads", Options{SFNPayloads: "zip"}, "serve: Options.SFNPayloads: "},
		{"skew", Options{MaxFutureSkew: -time.Hour}, "serve: Options.MaxFutureSkew: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, toolkit.ErrInvalidOptions) {
				t.Fatalf("Validate: %v, want an invalid-options error with %q", err, tt.want)
			}
		})
	}
}

// offlineClients are clients of a DynamoDB that is never reached: what
// New builds, the health route and the auth checks need no table.
func offlineClients(t *testing.T) *awsclient.Clients {
	t.Helper()
	c, err := awsclient.New(context.Background(), awsclient.Config{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:1", S3Endpoint: "http://127.0.0.1:1", S3AccessKey: "k", S3SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeAndShutDown: New settles the secrets (generating the missing
// ones, says which), the server answers on its URL, and ends when its
// context does.
func TestServeAndShutDown(t *testing.T) {
	n := schema.Naming{Prefix: "p", Stage: "dev"}
	s, err := New(offlineClients(t), n, true, Options{Addr: "127.0.0.1:0", Ingest: true, IngestToken: "given-ingest-token-0123"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.TokenGenerated || len(s.Token) < 16 || !s.WebhookSecretGenerated || s.IngestTokenGenerated || s.IngestToken != "given-ingest-token-0123" {
		t.Fatalf("secrets: %+v", s)
	}
	if strings.Join(s.IngestPaths, " ") != "/webhooks/github /events /eventbridge" {
		t.Fatalf("ingest paths %v", s.IngestPaths)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	base := s.URL()
	for _, re := range []string{
		`^streamfold: serving p-dev-\* tables on ` + regexp.QuoteMeta(base) + ` \(API under /api/\)\n`,
		`generated API token; open the dashboard at ` + regexp.QuoteMeta(base) + `/#token=` + s.Token + `\n`,
		`ingest on ` + regexp.QuoteMeta(base) + `: POST /webhooks/github, POST /events, POST /eventbridge\n`,
		`generated GitHub webhook secret .*: [0-9a-f]{40}\n`,
	} {
		if !regexp.MustCompile(re).MatchString(text.String()) {
			t.Errorf("text lacks %s:\n%s", re, text.String())
		}
	}
	if strings.Contains(text.String(), "given-ingest-token") || strings.Contains(text.String(), "generated ingest token") {
		t.Errorf("a given token is printed:\n%s", text.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	stopping := make(chan bool, 1)
	go func() { done <- s.Serve(ctx, func() { stopping <- true }) }()
	res, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Fatalf("health: %d %s", res.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if len(stopping) != 1 {
		t.Fatal("stopping was not called")
	}
	if _, err := http.Get(base + "/api/health"); err == nil {
		t.Fatal("the server still answers after its context ended")
	}
}

func TestNewRejectsBadTagFile(t *testing.T) {
	_, err := New(offlineClients(t), schema.Naming{Prefix: "p", Stage: "dev"}, true, Options{Ingest: true, SFNTags: "/nonexistent/tags.json"})
	if err == nil || !errors.Is(err, toolkit.ErrInvalidOptions) || !strings.Contains(err.Error(), "serve: Options.SFNTags: /nonexistent/tags.json") {
		t.Fatalf("New: %v", err)
	}
	s, err := New(offlineClients(t), schema.Naming{Prefix: "p", Stage: "dev"}, true, Options{SFNTags: "/nonexistent/tags.json"})
	if err != nil || len(s.IngestPaths) != 0 {
		t.Fatalf("without ingest the tag source is not opened: %v", err)
	}
}
