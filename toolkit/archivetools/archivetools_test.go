package archivetools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/archiver/queries"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		v    interface{ Validate() error }
		want string
	}{
		{"compact without date", CompactOptions{}, `archive compact: Options.Date: must be YYYY-MM-DD, got ""`},
		{"compact bad date", CompactOptions{Date: "2026-13-01"}, `archive compact: Options.Date: must be YYYY-MM-DD, got "2026-13-01"`},
		{"compact negative min age", CompactOptions{Date: "2026-01-01", MinAge: -time.Second}, "archive compact: Options.MinAge: must not be negative, got -1s"},
		{"compact unknown table", CompactOptions{Date: "2026-01-01", Target: Target{Table: "nope"}}, `archive compact: Options.Table: unknown table "nope"`},
		{"register all and table", RegisterOptions{All: true, Target: Target{Table: archiver.TableMessages}}, "archive register: Options.All: excludes Table: give one"},
		{"maintain orphan age", MaintainOptions{MaintainOptions: archiver.MaintainOptions{OrphanAge: time.Minute}}, "archive maintain: Options.MaintainOptions: "},
		{"migrate dry run and delete", MigrateOptions{DryRun: true, DeleteOld: true}, "archive migrate: Options.DeleteOld: excludes DryRun"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, toolkit.ErrInvalidOptions) {
				t.Fatalf("error %v, want %q (invalid options)", err, tt.want)
			}
		})
	}
	for _, v := range []interface{ Validate() error }{CompactOptions{Date: "2026-01-01"}, RegisterOptions{All: true}, MaintainOptions{}, MigrateOptions{DryRun: true}} {
		if err := v.Validate(); err != nil {
			t.Errorf("%+v: %v", v, err)
		}
	}
}

func TestCompactPlan(t *testing.T) {
	for _, tt := range []struct{ in, want time.Duration }{{0, -1}, {time.Hour, time.Hour}} {
		if got := (CompactOptions{MinAge: tt.in, DryRun: true}).plan(); got.MinAge != tt.want || !got.DryRun {
			t.Errorf("MinAge %s: plan %+v, want MinAge %s", tt.in, got, tt.want)
		}
	}
}

func TestTables(t *testing.T) {
	all, err := Tables("")
	if err != nil || len(all) != len(archiver.Tables()) {
		t.Fatalf("Tables(\"\") = %v, %v", all, err)
	}
	if one, err := Tables(archiver.TableMessages); err != nil || len(one) != 1 || one[0] != archiver.TableMessages {
		t.Fatalf("Tables(messages) = %v, %v", one, err)
	}
}

func TestProgressLine(t *testing.T) {
	tests := []struct {
		p    archiver.MigrateProgress
		want string
	}{
		{archiver.MigrateProgress{Table: "t", Date: "d", Status: archiver.MigrateMigrated, Objects: 2, InputBytes: 10, Files: 1, Bytes: 9, Records: 5, Duplicates: 1, Deleted: 3},
			"t event_date=d: migrated 2 objects (10 bytes) -> 1 files (9 bytes), 5 records, 1 duplicates dropped; deleted 2 old objects and manifest"},
		{archiver.MigrateProgress{Table: "t", Date: "d", Status: archiver.MigrateSkipped, ID: "x"}, "t event_date=d: migrated already (id x), skipped"},
		{archiver.MigrateProgress{Table: "t", Date: "d", Status: archiver.MigrateRefused, Err: errors.New("changed")}, "t event_date=d: REFUSED: changed"},
	}
	for _, tt := range tests {
		if got := ProgressLine(tt.p); got != tt.want {
			t.Errorf("ProgressLine = %q, want %q", got, tt.want)
		}
	}
}

// TestRenderings: the results' JSON is what the CLI has always printed
// (arrays, never null) and their text says what was found.
func TestRenderings(t *testing.T) {
	tests := []struct {
		name  string
		v     interface{ WriteText(w io.Writer) error }
		json  string
		text  string
		found bool
	}{
		{"empty listing", &Listing{URI: "s3://b/archive", Partitions: []Partition{}}, `[]`, "0 partitions (days), 0 data files in the current snapshots of s3://b/archive\n", false},
		{"listing", &Listing{URI: "u", Partitions: []Partition{{Table: "t", Date: "d", Objects: 2}}}, `[{"table":"t","date":"d","objects":2}]`, "t      d           2\n1 partitions (days), 2 data files", false},
		{"errors", &ErrorList{URI: "u", Records: []archiver.ErrorRecord{{SequenceNumber: "1", Reason: "bad"}}}, `[{"sequence_number":"1"`, "1 poison records under u/errors/\n", true},
		{"behind", &Registered{Registrations: []archiver.Registration{{Table: "t", Action: "behind"}}, DryRun: true}, `[{`, "dry run: nothing was changed (actions are what would be done)\n", true},
		{"compacted", &Compacted{Stats: []archiver.CompactStats{}}, `[]`, "TABLE  DATE", false},
		{"one query", &QueryList{Queries: []queries.Query{{Name: "q", SQL: "SELECT 1"}}, One: true}, `{"Name":"q"`, "SELECT 1\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := json.Marshal(tt.v)
			if err != nil || !strings.HasPrefix(string(js), tt.json) {
				t.Errorf("JSON %s, %v; want it to start %s", js, err, tt.json)
			}
			var b bytes.Buffer
			if err := tt.v.WriteText(&b); err != nil || !strings.Contains(b.String(), tt.text) {
				t.Errorf("text %q, %v; want it to hold %q", b.String(), err, tt.text)
			}
			f, ok := tt.v.(interface{ Found() error })
			if found := ok && f.Found() != nil; found != tt.found {
				t.Errorf("found %v, want %v", found, tt.found)
			}
		})
	}
}

// TestLsLocalWarehouse lists an empty filesystem warehouse: no service is
// needed (the DynamoDB endpoint is never dialled).
func TestLsLocalWarehouse(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "t-dev-archive"), 0o755); err != nil { // the bucket
		t.Fatal(err)
	}
	s := conn.Settings{DynamoDBEndpoint: "http://127.0.0.1:1", Region: "us-east-1", Prefix: "t", Stage: "dev", ArchiveDir: dir}
	l, err := Ls(context.Background(), Target{Settings: s}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Partitions) != 0 || l.URI != "s3://t-dev-archive/archive" {
		t.Fatalf("listing %+v", l)
	}
	if _, err := Ls(context.Background(), Target{Settings: s, Table: "nope"}, ""); !errors.Is(err, toolkit.ErrInvalidOptions) {
		t.Fatalf("unknown table: %v", err)
	}
}
