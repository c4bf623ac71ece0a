package simulate_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
)

// TestFullPayloads checks PayloadsFull against the trimmed run of the same
// Config: the same events, except the workflow_job bodies, which are 7-12 KB
// minified, validate, and decode to the same payload as the trimmed ones
// (so they project the same).
func TestFullPayloads(t *testing.T) {
	for _, o := range []simulate.Order{simulate.OrderTime, simulate.OrderSubject} {
		t.Run(string(o), func(t *testing.T) {
			cfg := simulate.Config{Seed: 21, Events: 2000, Days: 2, Order: o, Mix: simulate.Mix{Jobs: 1}}
			trimmed, _ := generate(t, cfg)
			cfg.GitHubPayloads = simulate.PayloadsFull
			full, st := generate(t, cfg)
			check(t, cfg, full, st)
			if len(full) != len(trimmed) {
				t.Fatalf("%d full events, %d trimmed", len(full), len(trimmed))
			}
			webhooks, ghes, waiting := 0, 0, 0
			for i := range full {
				f, tr := full[i], trimmed[i]
				if f.ID != tr.ID || f.Subject != tr.Subject || f.Type != tr.Type || f.Source != tr.Source || !f.Time.Equal(tr.Time) {
					t.Fatalf("event %d: full %s %s %s, trimmed %s %s %s", i, f.Type, f.Subject, f.ID, tr.Type, tr.Subject, tr.ID)
				}
				if !strings.HasPrefix(f.Type, schema.WorkflowJobTypePrefix) {
					if !bytes.Equal(f.Data, tr.Data) {
						t.Fatalf("event %d (%s): data differs", i, f.Type)
					}
					continue
				}
				webhooks++
				var compact bytes.Buffer
				if err := json.Compact(&compact, f.Data); err != nil || compact.Len() != len(f.Data) {
					t.Fatalf("event %d: data is not minified JSON (%v)", i, err)
				}
				if n := len(f.Data); n < 7000 || n > 12000 {
					t.Errorf("event %d (%s): %d bytes, want 7-12 KB", i, f.Type, n)
				}
				if len(tr.Data) > 3000 {
					t.Errorf("event %d (%s): trimmed body of %d bytes", i, f.Type, len(tr.Data))
				}
				if bytes.Contains(f.Data, []byte(`"workflow_id"`)) {
					t.Fatalf("event %d: a full body has workflow_id, which GitHub does not send and the projector reads", i)
				}
				pf, err := schema.Decode(f)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				pt, err := schema.Decode(tr)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(pf, pt) {
					t.Fatalf("event %d: full and trimmed bodies decode differently:\n%+v\n%+v", i, pf, pt)
				}
				w := pf.(*schema.WorkflowJobWebhook)
				if w.Installation == nil {
					ghes++
				}
				if w.Deployment != nil {
					waiting++
				}
			}
			if webhooks < 500 || ghes == 0 || waiting == 0 {
				t.Errorf("%d webhooks, %d from GHES, %d with a deployment; want many, some, some", webhooks, ghes, waiting)
			}
		})
	}
}

// TestFullPayloadShape compares the objects of a full body with a real
// GitHub delivery (ingest/testdata/github): every field GitHub sends in the
// repository, its owner, the organization, the sender and the installation
// is there.
func TestFullPayloadShape(t *testing.T) {
	raw, err := os.ReadFile("../testdata/github/workflow_job_completed.json")
	if err != nil {
		t.Fatal(err)
	}
	var real map[string]any
	if err := json.Unmarshal(raw, &real); err != nil {
		t.Fatal(err)
	}
	evs, _ := generate(t, simulate.Config{Seed: 22, Events: 400, Mix: simulate.Mix{Jobs: 1}, GitHubPayloads: simulate.PayloadsFull})
	checked := 0
	for _, e := range evs {
		if e.Type != schema.TypeJobCompleted || !strings.Contains(e.Subject, "/12345/") {
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(e.Data, &got); err != nil {
			t.Fatal(err)
		}
		want, have := keyPaths("", real), keyPaths("", got)
		var missing []string
		for _, k := range want {
			if !strings.HasPrefix(k, "workflow_job.") && !slices.Contains(have, k) {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			t.Fatalf("a full body lacks fields of GitHub's: %v", missing)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no completed webhook of installation 12345")
	}
}

// keyPaths lists the dotted paths of an object's fields, objects included.
func keyPaths(prefix string, v map[string]any) []string {
	var out []string
	for k, x := range v {
		out = append(out, prefix+k)
		if m, ok := x.(map[string]any); ok {
			out = append(out, keyPaths(prefix+k+".", m)...)
		}
	}
	return out
}
