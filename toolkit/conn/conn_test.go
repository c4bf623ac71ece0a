package conn_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/conn"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		s    conn.Settings
		want string // "" = valid, else a substring of the error
	}{
		{"defaults", conn.Settings{Prefix: "streamfold", Stage: "dev"}, ""},
		{"shards", conn.Settings{Prefix: "streamfold", Stage: "prod", GSIShards: "4"}, ""},
		{"bad stage", conn.Settings{Prefix: "streamfold", Stage: "qa"}, "Stage"},
		{"no prefix", conn.Settings{Stage: "dev"}, "Prefix"},
		{"bad shards", conn.Settings{Prefix: "streamfold", Stage: "dev", GSIShards: "many"}, "many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCatalogURI(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return "sqlite:" + a
	}
	tests := []struct {
		name string
		s    conn.Settings
		want string
	}{
		{"given", conn.Settings{Catalog: "glue:123", ArchiveDir: "w", S3Endpoint: "http://x"}, "glue:123"},
		{"filesystem warehouse", conn.Settings{ArchiveDir: "w", S3Endpoint: "http://x"}, abs("w/catalog.db")},
		{"AWS", conn.Settings{}, "glue"},
		{"local S3, state dir", conn.Settings{S3Endpoint: "http://x", StateDir: "/tmp/st"}, "sqlite:/tmp/st/catalog.db"},
		{"local S3, default state dir", conn.Settings{S3Endpoint: "http://x"}, abs(filepath.Join(conn.DefaultStateDir, "catalog.db"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.CatalogURI()
			if err != nil || got != tt.want {
				t.Fatalf("CatalogURI() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestArchiveNamespace(t *testing.T) {
	n := schema.Naming{Prefix: "my-app", Stage: "dev"}
	for _, tt := range []struct{ bucket, want string }{
		{"other-prod-archive", "other_prod_archive"}, // the namespace follows the archive's bucket
		{"my.bucket-archive", "my_app_dev_archive"},  // not a Terraform name: n's default
		{"somewhere", "my_app_dev_archive"},
	} {
		if got := conn.ArchiveNamespace(tt.bucket, n); got != tt.want {
			t.Errorf("ArchiveNamespace(%q) = %q, want %q", tt.bucket, got, tt.want)
		}
	}
	if got := conn.DefaultArchive(n); got != "s3://"+n.BucketName()+"/archive" {
		t.Errorf("DefaultArchive = %q", got)
	}
}

// TestClientsWithoutAWS: without an endpoint, a region or credentials,
// Clients says so at once (ErrNoAWS) and names the local stack.
func TestClientsWithoutAWS(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	_, err := conn.Settings{Prefix: "streamfold", Stage: "dev"}.Clients(context.Background())
	if !errors.Is(err, conn.ErrNoAWS) || !strings.Contains(err.Error(), "streamfold dev up") {
		t.Fatalf("Clients() = %v, want ErrNoAWS naming the local stack", err)
	}
}
