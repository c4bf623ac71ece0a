package archiver

import (
	"strings"
	"testing"
	"time"
)

func TestMetadataVersion(t *testing.T) {
	tests := []struct {
		key  string
		want int
		ok   bool
	}{
		{"archive/messages/metadata/00012-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json", 12, true},
		{"archive/messages/metadata/00000-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json", 0, true},
		{"m/metadata/123456-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json", 123456, true},
		{"m/metadata/00007-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.gz.metadata.json", 7, true},
		{"m/metadata/00007-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json.gz", 7, true},
		{"m/metadata/v41.metadata.json", 41, true},
		{"m/metadata/version-hint.text", 0, false},
		{"m/metadata/snap-1-1-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.avro", 0, false},
		{"m/metadata/3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json", 0, false}, // a Hadoop temporary file
		{"m/metadata/00012-3f2a1c9e.metadata.json", 0, false},
		{"m/metadata/00012-3f2a1c9e-8d4b-4c1e-9a7f-0123456789ab.metadata.json.tmp", 0, false},
	}
	for _, tt := range tests {
		got, ok := metadataVersion(tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("metadataVersion(%q) = %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLatestMetadata: the newest metadata file is the highest version
// number, not the latest written or the last in key order (version 00100
// sorts after 00099 only because of the padding, and a writer's clock says
// nothing); of tied files (writers that raced for one commit) the first
// written, then the smallest key; the tied others are reported.
func TestLatestMetadata(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f := func(key string, v int, minutes int) metadataFile {
		return metadataFile{Key: key, Version: v, Modified: t0.Add(time.Duration(minutes) * time.Minute)}
	}
	tests := []struct {
		name     string
		files    []metadataFile
		want     string
		wantTied []string
		ok       bool
	}{
		{"none", nil, "", nil, false},
		{"one", []metadataFile{f("a", 0, 0)}, "a", nil, true},
		{"highest version, though written earlier", []metadataFile{f("v9", 9, 50), f("v10", 10, 10), f("v8", 8, 60)}, "v10", nil, true},
		{"not key order", []metadataFile{f("m/00099-x", 99, 0), f("m/100000-x", 100000, 0), f("m/99999-x", 99999, 0)}, "m/100000-x", nil, true},
		{"tie: first written", []metadataFile{f("b", 5, 2), f("a", 5, 3), f("c", 4, 9)}, "b", []string{"a"}, true},
		{"tie: same time, smallest key", []metadataFile{f("z", 5, 1), f("y", 5, 1), f("x", 5, 1)}, "x", []string{"y", "z"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]metadataFile(nil), tt.files...)
			got, tied, ok := latestMetadata(tt.files)
			if ok != tt.ok || got.Key != tt.want {
				t.Fatalf("latest = %q, %v; want %q, %v", got.Key, ok, tt.want, tt.ok)
			}
			var keys []string
			for _, m := range tied {
				keys = append(keys, m.Key)
			}
			if strings.Join(keys, ",") != strings.Join(tt.wantTied, ",") {
				t.Errorf("tied %v, want %v", keys, tt.wantTied)
			}
			for i := range in {
				if in[i] != tt.files[i] {
					t.Fatal("latestMetadata reordered its argument")
				}
			}
		})
	}
}

// TestCheckHistory: the decision that makes maintenance refuse a table whose
// catalog entry is not the whole history at its location.
func TestCheckHistory(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old := now.Add(-48 * time.Hour)
	m := func(key, uuid string, v, snaps int, at time.Time) locationMetadata {
		return locationMetadata{metadataFile: metadataFile{Key: key, Version: v, Modified: at}, UUID: uuid, Snapshots: snaps}
	}
	base := historyFacts{Table: "messages", Location: "s3://bkt/archive/messages", CurrentKey: "s3://bkt/archive/messages/metadata/00003-c.metadata.json", CurrentVersion: 3, CurrentUUID: "U", Now: now}
	tests := []struct {
		name  string
		files []locationMetadata
		want  string // "" for no refusal, else a part of the reason
		f, n  int
	}{
		{"own history only", []locationMetadata{m("1", "U", 1, 1, old), m("2", "U", 2, 2, old), m("3", "U", 3, 3, old)}, "", 0, 0},
		{"a loser of a commit race (same version, not committed)", []locationMetadata{m("3", "U", 3, 3, old), m("3b", "U", 3, 3, old)}, "", 0, 0},
		{"an empty table of another uuid (a lost create race)", []locationMetadata{m("0x", "V", 0, 0, old), m("3", "U", 3, 3, old)}, "", 0, 0},
		{"another table's history", []locationMetadata{m("0", "U", 0, 0, old), m("3", "U", 3, 3, old), m("41", "V", 41, 40, old)}, "another table than the catalog's", 1, 0},
		{"newer metadata of this table", []locationMetadata{m("3", "U", 3, 3, old), m("4", "U", 4, 4, old), m("5", "U", 5, 5, old)}, "newer than the catalog's version 3", 0, 2},
		{"a commit in flight is not newer history yet", []locationMetadata{m("3", "U", 3, 3, old), m("4", "U", 4, 4, now.Add(-time.Minute))}, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base
			f.Files = tt.files
			e := checkHistory(f)
			if tt.want == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil || !strings.Contains(e.Error(), tt.want) || e.Foreign != tt.f || e.Newer != tt.n {
				t.Fatalf("got %v, want a refusal with %q (foreign %d, newer %d)", e, tt.want, tt.f, tt.n)
			}
			for _, part := range []string{"messages", "s3://bkt/archive/messages", "nothing was changed"} {
				if !strings.Contains(e.Error(), part) {
					t.Errorf("the refusal does not name %q: %v", part, e)
				}
			}
		})
	}
	created := now.Add(-24 * time.Hour)
	if e := checkOrphanAges(checkHistoryBase(base), 0, 3, created); e != nil {
		t.Errorf("no orphan data file older than the table: refused %v", e)
	}
	e := checkOrphanAges(checkHistoryBase(base), 40, 2, created)
	if e == nil || e.OrphanDataFiles != 40 || e.LiveDataFiles != 2 || !strings.Contains(e.Error(), "40 orphan data files would be deleted that were written before the table was created") {
		t.Errorf("40 orphan data files older than the table: %v", e)
	}
}
