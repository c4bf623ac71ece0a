package ghurls

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.elided from the fixtures")

// TestElideFixtures: each fixture's elided form is its golden file (the
// format is frozen: a change of rulesV1 shows here), restores to the exact
// fixture, and elides the fields the case names, keeping the others.
func TestElideFixtures(t *testing.T) {
	tests := []struct {
		file   string
		elided int      // markers written
		kept   []string // raw strings that must stay in the elided form
	}{
		// github.com, with a deployment and its creator: every URL of the
		// repository (42), its owner (12), the organization (8), the sender
		// (12), the job (4), the deployment (3) and its creator (12).
		{"github_com_deployment.json", 93, nil},
		{"github_com_completed_bot.json", 78, nil},
		// GitHub Enterprise Server: another host, the API under /api/v3,
		// avatars on the instance.
		{"ghes_in_progress.json", 78, nil},
		// GitHub's documented example: the job's URLs name another
		// repository (octo-org/octo-repo) than repository.full_name, and the
		// avatars are on avatars1.githubusercontent.com; they stay.
		{"github_docs_example_other_repo.json", 71, []string{
			`"run_url": "https://api.github.com/repos/octo-org/octo-repo/actions/runs/1291536064"`,
			`"url": "https://api.github.com/repos/octo-org/octo-repo/actions/jobs/1291536064"`,
			`"html_url": "https://github.com/octo-org/octo-repo/runs/1291536064"`,
			`"check_run_url": "https://api.github.com/repos/octo-org/octo-repo/check-runs/1291536064"`,
			`"avatar_url": "https://avatars1.githubusercontent.com/u/`,
		}},
		// A value that differs from its derivation in any byte stays.
		{"mismatch.json", 86, []string{
			`"forks_url":"http://api.github.com/repos/acme-corp/api/forks"`,
			`"keys_url":"https://api.github.com/repos/ACME-CORP/API/keys{/key_id}"`,
			`"hooks_url":"https:\/\/api.github.com\/repos\/acme-corp\/api\/hooks"`,
			`"url":"https://api.github.com/users/someone-else"`,
			`/actions/jobs/`,
			`?v=3"`,
			`/statuses/"`,
		}},
		// Escapes (a derivation joins raw text: "o\/r\u00e9" elides
		// where the URL has the same escapes, not where it has "o/ré"),
		// shadowed keys (the first login counts), odd types, a second
		// top-level repository (F is the first one's), "\u0001" text and
		// the second alternative of a derivation (organization.avatar_url).
		{"markers.json", 16, []string{
			`"note":"\u0001 not a marker \u0001","marker":"\u0001"`,
			`"run_url":"https://api.github.com/repos/o/ré/actions/runs/7"`,
			`"check_run_url":"\u0001"`,
			`"avatar_url":"https://avatars.githubusercontent.com/u/1.0?v=4"`,
			`"html_url":"https://github.com/shadowed"`,
			`"avatar_url":"` + "\x01" + `1"`,
			`"forks_url":null,"keys_url":5,"teams_url":["https://api.github.com/repos/o\/r\u00e9/teams"],"tags_url":{"url":"https://api.github.com/repos/o\/r\u00e9"}`,
			`"html_url":"https://github.com/\u00fcmlaut-\u00fcser"`,
			`"list":[{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r"}}]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			elided, ok := Elide(data)
			if !ok {
				t.Fatal("nothing elided")
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(tt.file, ".json")+".elided")
			if *update {
				if err := os.WriteFile(golden, elided, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./schema/internal/ghurls -update writes it)", err)
			}
			if !bytes.Equal(elided, want) {
				t.Errorf("elided form differs from %s: the format is frozen (a new rule is a new version)\n got %q\nwant %q", golden, elided, want)
			}
			// The golden file is what items hold: it must restore for ever.
			back, err := Restore(want, len(data))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, data) {
				t.Fatalf("restored data differs:\n got %s\nwant %s", back, data)
			}
			if n := bytes.Count(elided, []byte{urlMarker}) - 2; n != tt.elided {
				t.Errorf("%d values elided, want %d", n, tt.elided)
			}
			for _, k := range tt.kept {
				if !bytes.Contains(elided, []byte(k)) {
					t.Errorf("elided form lost %s", k)
				}
			}
			t.Logf("%d bytes, elided %d", len(data), len(elided))
		})
	}
}

func TestElideHeader(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"github.com", `{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r","html_url":"https://github.com/o/r"}}`,
			"https://api.github.com\x01https://github.com\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x01" + `","html_url":"` + "\x01" + `"}}`},
		{"GHES", `{"repository":{"url":"https://ghe.example.com/api/v3/repos/o/r","html_url":"https://ghe.example.com/o/r","full_name":"o/r","git_url":"git://ghe.example.com/o/r.git"}}`,
			"https://ghe.example.com/api/v3\x01https://ghe.example.com\x01" + `{"repository":{"url":"` + "\x01" + `","html_url":"` + "\x01" + `","full_name":"o/r","git_url":"` + "\x01" + `"}}`},
		{"no web base", `{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r","html_url":"https://github.com/o/other"}}`,
			"https://api.github.com\x01\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x01" + `","html_url":"https://github.com/o/other"}}`},
		{"an html_url of the repository's own host only", `{"repository":{"full_name":"o/r","html_url":"/o/r","url":"/repos/o/r"}}`, ""},
		{"no full_name", `{"repository":{"url":"https://api.github.com/repos/o/r"}}`, ""},
		{"full_name not a string", `{"repository":{"full_name":1,"url":"https://api.github.com/repos/1"}}`, ""},
		{"not JSON", `{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r"}`, ""},
		{"a raw 0x01", "{\"repository\":{\"full_name\":\"o/r\",\"url\":\"https://api.github.com/repos/o/r\",\"x\":\"\x01\"}}", ""},
		{"top level array", `[{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r"}}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Elide([]byte(tt.data))
			if ok != (tt.want != "") || string(got) != tt.want {
				t.Fatalf("Elide = %q, %v\nwant %q", got, ok, tt.want)
			}
		})
	}
}

func TestRestoreErrors(t *testing.T) {
	tests := []struct {
		name, enc, want string
		limit           int
	}{
		{"no header", `{"a":1}`, "ghurls: no header", 100},
		{"one separator", "a\x01{}", "ghurls: no header", 100},
		{"not JSON", "a\x01b\x01{", "ghurls: not JSON text", 100},
		{"trailing bytes", "a\x01b\x01{} x", "ghurls: not JSON text", 100},
		{"malformed marker", "a\x01b\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x01x" + `"}}`, "ghurls: byte 44: malformed marker", 100},
		{"unknown alternative", "a\x01b\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x012" + `"}}`, `ghurls: byte 44: field "url" has no derivation 2`, 100},
		{"input missing", "\x01b\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x01" + `"}}`, `ghurls: byte 43: field "url": an input of its derivation is missing`, 100},
		{"above the limit", "a\x01b\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x01" + `"}}`, "ghurls: restored data exceeds 20 bytes", 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Restore([]byte(tt.enc), tt.limit)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

// seeds adds the fixtures to a fuzz corpus.
func seeds(f *testing.F) [][]byte {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures (%v)", err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzURLCodec: whatever the bytes, Elide either declines or produces a
// form that Restore turns back into exactly those bytes.
func FuzzURLCodec(f *testing.F) {
	for _, b := range seeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		elided, ok := Elide(data)
		if !ok {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("elided text that is not JSON: %q", data)
		}
		back, err := Restore(elided, len(data))
		if err != nil {
			t.Fatalf("Restore: %v\nelided %q", err, elided)
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("round trip changed the data:\n got %q\nwant %q", back, data)
		}
	})
}

// FuzzURLCodecWebhook builds webhooks whose URLs derive from fuzzed names,
// hosts and ids (JSON-escaped as encoding/json writes them, so that
// escapes, quotes, non-ASCII and control characters end up inside
// derivations), with some URLs spoiled, and checks the round trip and that
// matching URLs are elided.
func FuzzURLCodecWebhook(f *testing.F) {
	f.Add("https://api.github.com", "https://github.com", "octo/hello", "mona", uint64(42), uint8(0))
	f.Add("https://ghe.example.com/api/v3", "https://ghe.example.com", "a/b", "x", uint64(1), uint8(0xff))
	f.Add("", "", "", "", uint64(0), uint8(3))
	f.Add("\x01", "\"", "\\", "\u2028<&>", uint64(7), uint8(1))
	f.Fuzz(func(t *testing.T, api, web, full, login string, id uint64, spoil uint8) {
		s := func(v string) string { b, _ := json.Marshal(v); return string(b) }
		n := strconv.FormatUint(id, 10)
		urls := []string{
			api + "/repos/" + full, web + "/" + full, api + "/repos/" + full + "/forks",
			api + "/users/" + login, web + "/" + login, api + "/users/" + login + "/repos",
			api + "/repos/" + full + "/actions/jobs/" + n, web + "/" + full + "/actions/runs/" + n + "/job/" + n,
		}
		for i := range urls {
			if spoil&(1<<i) != 0 {
				urls[i] += "x"
			}
		}
		data := []byte(`{"workflow_job":{"id":` + n + `,"run_id":` + n + `,"url":` + s(urls[6]) + `,"html_url":` + s(urls[7]) + `},` +
			`"repository":{"full_name":` + s(full) + `,"url":` + s(urls[0]) + `,"html_url":` + s(urls[1]) + `,"forks_url":` + s(urls[2]) + `,` +
			`"owner":{"login":` + s(login) + `,"id":` + n + `,"url":` + s(urls[3]) + `,"html_url":` + s(urls[4]) + `,"repos_url":` + s(urls[5]) + `}}}`)
		elided, ok := Elide(data)
		// repository.url yields the API base when it is not spoiled.
		if spoil&1 == 0 && api != "" && !bytes.Contains(elided, []byte(`"forks_url":`+s(urls[2])+`,"owner"`)) && !bytes.Contains(elided, []byte(`"full_name":`+s(full)+`,"url":"`+"\x01"+`"`)) {
			t.Fatalf("repository.url not elided from %s: %q", data, elided)
		}
		if !ok {
			return
		}
		back, err := Restore(elided, len(data))
		if err != nil {
			t.Fatalf("Restore: %v\nelided %q", err, elided)
		}
		if !bytes.Equal(back, data) {
			t.Fatalf("round trip changed the data:\n got %q\nwant %q", back, data)
		}
	})
}

// FuzzRestore: whatever an item's frame held, Restore returns an error or
// at most limit bytes, never panics.
func FuzzRestore(f *testing.F) {
	for _, b := range seeds(f) {
		if e, ok := Elide(b); ok {
			f.Add(e)
		}
	}
	f.Add([]byte("a\x01b\x01{\"repository\":{\"full_name\":\"o/r\",\"url\":\"\x01\"}}"))
	f.Fuzz(func(t *testing.T, enc []byte) {
		const limit = 1 << 16
		out, err := Restore(enc, limit)
		if err == nil && len(out) > limit {
			t.Fatalf("%d bytes, above the limit", len(out))
		}
	})
}

// BenchmarkRestore: restoring a full-size webhook (the cost EventFromItem
// adds to decompressing).
func BenchmarkRestore(b *testing.B) {
	data, err := os.ReadFile("testdata/github_com_deployment.json")
	if err != nil {
		b.Fatal(err)
	}
	elided, ok := Elide(data)
	if !ok {
		b.Fatal("nothing elided")
	}
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, err := Restore(elided, len(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkElide: eliding a full-size webhook (before compressing it).
func BenchmarkElide(b *testing.B) {
	data, err := os.ReadFile("testdata/github_com_deployment.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for range b.N {
		if _, ok := Elide(data); !ok {
			b.Fatal("nothing elided")
		}
	}
}
