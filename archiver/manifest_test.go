package archiver

import (
	"slices"
	"testing"
)

func TestManifestFormat(t *testing.T) {
	body := formatManifest([]string{"s3://b/k/2", "s3://b/k/1", "s3://b/k/2"})
	if string(body) != "s3://b/k/1\ns3://b/k/2\n" {
		t.Fatalf("formatManifest = %q: want sorted, unique, one per line", body)
	}
	if got := parseManifest([]byte("s3://b/k/1\r\n\n  s3://b/k/2\n")); !slices.Equal(got, []string{"s3://b/k/1", "s3://b/k/2"}) {
		t.Fatalf("parseManifest = %q", got)
	}
	// A manifest edited by hand (unsorted, a line twice) reads sorted and
	// without duplicates, and has finds every entry.
	m := manifest{uris: parseManifest([]byte("s3://b/k/3\ns3://b/k/1\ns3://b/k/3\ns3://b/k/2\n"))}
	if !slices.Equal(m.uris, []string{"s3://b/k/1", "s3://b/k/2", "s3://b/k/3"}) {
		t.Fatalf("parseManifest(unsorted) = %q", m.uris)
	}
	for _, u := range []string{"s3://b/k/1", "s3://b/k/2", "s3://b/k/3"} {
		if !m.has(u) {
			t.Errorf("has(%q) = false", u)
		}
	}
	if m.has("s3://b/k/0") || m.has("s3://b/k/4") {
		t.Error("has reports an entry the manifest lacks")
	}
	if got := parseManifest(nil); len(got) != 0 {
		t.Fatalf("parseManifest(empty) = %q", got)
	}
	if body := formatManifest(nil); len(body) != 0 {
		t.Fatalf("formatManifest(nil) = %q", body)
	}
}

func TestAddURIs(t *testing.T) {
	cases := []struct {
		name        string
		cur, add    []string
		want        []string
		wantChanged bool
	}{
		{"to an absent manifest", nil, []string{"u2"}, []string{"u2"}, true},
		{"keeps order sorted", []string{"u1", "u3"}, []string{"u2"}, []string{"u1", "u2", "u3"}, true},
		{"a listed URI is a no-op", []string{"u1", "u2"}, []string{"u2"}, []string{"u1", "u2"}, false},
		{"several, some listed", []string{"u1"}, []string{"u1", "u0", "u0"}, []string{"u0", "u1"}, true},
	}
	for _, c := range cases {
		got, changed := addURIs(c.cur, c.add)
		if !slices.Equal(got, c.want) || changed != c.wantChanged {
			t.Errorf("%s: addURIs(%v, %v) = %v, %v; want %v, %v", c.name, c.cur, c.add, got, changed, c.want, c.wantChanged)
		}
	}
}

func TestReplaceURIs(t *testing.T) {
	cases := []struct {
		name              string
		cur, remove, add  []string
		want, wantMissing []string
	}{
		{"swap inputs for outputs", []string{"a", "b", "c"}, []string{"a", "b"}, []string{"o"}, []string{"c", "o"}, nil},
		{"keeps URIs added since the read", []string{"a", "b", "n"}, []string{"a", "b"}, []string{"o"}, []string{"n", "o"}, nil},
		{"every input replaced, nothing else", []string{"a", "b"}, []string{"a", "b"}, []string{"o1", "o2"}, []string{"o1", "o2"}, nil},
		{"no outputs (all rows were duplicates)", []string{"a", "b", "c"}, []string{"b"}, nil, []string{"a", "c"}, nil},
		{"an input is gone: conflict, nothing replaced", []string{"a", "o"}, []string{"a", "b"}, []string{"o2"}, nil, []string{"b"}},
	}
	for _, c := range cases {
		got, missing := replaceURIs(c.cur, c.remove, c.add)
		if !slices.Equal(got, c.want) || !slices.Equal(missing, c.wantMissing) {
			t.Errorf("%s: replaceURIs = %v, missing %v; want %v, missing %v", c.name, got, missing, c.want, c.wantMissing)
		}
	}
}
