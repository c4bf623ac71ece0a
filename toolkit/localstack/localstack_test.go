package localstack

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/internal/laptop/devstack"
	"github.com/streamfold/streamfold/schema/provision"
	"github.com/streamfold/streamfold/toolkit"
)

// TestArchiveMode: the given mode wins; without it, what the state dir's
// last up recorded; without either, MinIO (what make test starts).
func TestArchiveMode(t *testing.T) {
	for _, tc := range []struct {
		name, recorded, mode, want, wantErr string
	}{
		{name: "nothing recorded", want: ArchiveMinIO},
		{name: "fs recorded", recorded: "fs\n", want: ArchiveFS},
		{name: "minio recorded", recorded: "minio\n", want: ArchiveMinIO},
		{name: "flag over record", recorded: "fs\n", mode: "minio", want: ArchiveMinIO},
		{name: "flag fs", mode: "fs", want: ArchiveFS},
		{name: "unknown flag", mode: "s3", wantErr: `"s3": want minio or fs`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.recorded != "" {
				if err := os.WriteFile(modeFile(dir), []byte(tc.recorded), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ArchiveMode(dir, tc.mode)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ArchiveMode(%q) = %q, %v; want error %q", tc.mode, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ArchiveMode(%q) = %q, %v; want %q", tc.mode, got, err, tc.want)
			}
		})
	}
}

// TestValidate: defaults applied, the archive mode resolved (SkipMinIO
// with fs), and a bad field named.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(modeFile(dir), []byte("fs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Stack: devstack.Config{StateDir: dir}, Prefix: "streamfold", Stage: "dev"}
	if err := o.Validate(); err != nil || o.Archive != ArchiveFS || !o.Stack.SkipMinIO || o.Stack.DynamoDBPort == 0 {
		t.Fatalf("Validate: %v, %+v", err, o)
	}
	for _, tc := range []struct {
		name, field string
		o           Options
	}{
		{"archive", "Archive", Options{Prefix: "streamfold", Stage: "dev", Archive: "s3"}},
		{"stage", "Prefix", Options{Prefix: "streamfold", Stage: "qa"}},
	} {
		err := tc.o.Validate()
		var oe *toolkit.OptionsError
		if !errors.As(err, &oe) || oe.Field != tc.field || !errors.Is(err, toolkit.ErrInvalidOptions) {
			t.Errorf("%s: %v, want an OptionsError on %s", tc.name, err, tc.field)
		}
	}
}

// TestWriteText: what dev up prints, the export line last; dev down says
// stopped; with the fs archive MinIO's line gives way to the warehouse.
func TestWriteText(t *testing.T) {
	db := devstack.Service{Name: "dynamodb", Endpoint: "http://127.0.0.1:8766", Running: true, StartedByUs: true, PID: 42}
	s3 := devstack.Service{Name: "minio", Endpoint: "http://127.0.0.1:9766"}
	for _, tc := range []struct {
		name    string
		r       Report
		stopped bool
		want    string
	}{
		{"up fs", Report{DynamoDB: db, S3: s3, ArchiveDir: "/w", Bucket: "p-dev-archive",
			Tables: []provision.Result{{Name: "p-dev-events", Created: true}, {Name: "p-dev-jobs"}},
			Export: map[string]string{"STREAMFOLD_PREFIX": "p", "STREAMFOLD_DYNAMODB_ENDPOINT": db.Endpoint, "STREAMFOLD_ARCHIVE_DIR": "/w"}}, false,
			"dynamodb  http://127.0.0.1:8766    running, pid 42\narchive   /w (a local filesystem warehouse, no MinIO)\n" +
				"tables    2 ready (1 created), e.g. p-dev-events\nbucket    p-dev-archive\n\n" +
				"export STREAMFOLD_DYNAMODB_ENDPOINT=http://127.0.0.1:8766 STREAMFOLD_ARCHIVE_DIR=/w STREAMFOLD_PREFIX=p\n"},
		{"down", Report{DynamoDB: devstack.Service{Name: "dynamodb", Endpoint: db.Endpoint}, S3: s3}, true,
			"dynamodb  http://127.0.0.1:8766    stopped\nminio     http://127.0.0.1:9766    stopped\n"},
		{"status", Report{DynamoDB: devstack.Service{Name: "dynamodb", Endpoint: db.Endpoint, Running: true}, S3: s3}, false,
			"dynamodb  http://127.0.0.1:8766    running (not started by streamfold)\nminio     http://127.0.0.1:9766    not running\n"},
	} {
		var b bytes.Buffer
		if err := tc.r.WriteText(&b, tc.stopped); err != nil || b.String() != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.name, err, b.String(), tc.want)
		}
	}
}
