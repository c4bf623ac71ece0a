package simulate_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/golden"
	"github.com/streamfold/streamfold/schema"
)

func TestConfigValidate(t *testing.T) {
	valid := func() simulate.Config {
		c := simulate.Config{Seed: 1, Events: 10}
		c.SetDefaults()
		return c
	}
	tests := []struct {
		name   string
		modify func(*simulate.Config)
		want   string
	}{
		{"defaults", func(*simulate.Config) {}, ""},
		{"events zero", func(c *simulate.Config) { c.Events = 0 }, "simulate: Config.Events: must be at least 1"},
		{"events negative", func(c *simulate.Config) { c.Events = -5 }, "simulate: Config.Events: must be at least 1"},
		{"start zero", func(c *simulate.Config) { c.Start = time.Time{} }, "simulate: Config.Start: must be between 2000-01-01 and 2099-12-31"},
		{"start 2100", func(c *simulate.Config) { c.Start = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) }, "simulate: Config.Start: must be between 2000-01-01 and 2099-12-31"},
		{"start not midnight", func(c *simulate.Config) { c.Start = c.Start.Add(time.Hour) }, "simulate: Config.Start: must be a UTC midnight"},
		{"start local midnight", func(c *simulate.Config) {
			c.Start = time.Date(2026, 1, 5, 0, 0, 0, 0, time.FixedZone("CET", 3600))
		}, "simulate: Config.Start: must be a UTC midnight"},
		{"start UTC midnight in another zone", func(c *simulate.Config) {
			c.Start = time.Date(2026, 1, 5, 1, 0, 0, 0, time.FixedZone("CET", 3600))
		}, ""},
		{"days zero", func(c *simulate.Config) { c.Days = 0 }, "simulate: Config.Days: must be between 1 and 366"},
		{"days too many", func(c *simulate.Config) { c.Days = 367 }, "simulate: Config.Days: must be between 1 and 366"},
		{"days max", func(c *simulate.Config) { c.Days = 366 }, ""},
		{"mix zero is default", func(c *simulate.Config) { c.Mix = simulate.Mix{} }, ""},
		{"mix one domain", func(c *simulate.Config) { c.Mix = simulate.Mix{Albums: 1} }, ""},
		{"mix jobs negative", func(c *simulate.Config) { c.Mix.Jobs = -1 }, "simulate: Config.Mix.Jobs: must be between 0 and 1000000"},
		{"mix agents negative", func(c *simulate.Config) { c.Mix.Agents = -1 }, "simulate: Config.Mix.Agents: must be between 0 and 1000000"},
		{"mix albums too big", func(c *simulate.Config) { c.Mix.Albums = 1_000_001 }, "simulate: Config.Mix.Albums: must be between 0 and 1000000"},
		{"mix messages negative", func(c *simulate.Config) { c.Mix.Messages = -3 }, "simulate: Config.Mix.Messages: must be between 0 and 1000000"},
		{"order subject", func(c *simulate.Config) { c.Order, c.Rate = simulate.OrderSubject, 0 }, ""},
		{"order unknown", func(c *simulate.Config) { c.Order = "random" }, `simulate: Config.Order: must be "time" or "subject"`},
		{"rate zero", func(c *simulate.Config) { c.Rate = 0 }, "simulate: Config.Rate: must be between 1 and 100000"},
		{"rate negative", func(c *simulate.Config) { c.Rate = -1 }, "simulate: Config.Rate: must be between 1 and 100000"},
		{"rate too big", func(c *simulate.Config) { c.Rate = 100_001 }, "simulate: Config.Rate: must be between 1 and 100000"},
		{"rate max", func(c *simulate.Config) { c.Rate = simulate.MaxRate }, ""},
		{"rate with order subject", func(c *simulate.Config) { c.Order, c.Rate = simulate.OrderSubject, 5 }, `simulate: Config.Rate: must be 0 with Order "subject"`},
		{"payloads full", func(c *simulate.Config) { c.GitHubPayloads = simulate.PayloadsFull }, ""},
		{"payloads unknown", func(c *simulate.Config) { c.GitHubPayloads = "huge" }, `simulate: Config.GitHubPayloads: must be "trimmed" or "full"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.modify(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			// Generate validates too, after SetDefaults (which fills a zero
			// Start, Days or Rate): it fails when the defaults do not mend
			// the field.
			d := c
			d.SetDefaults()
			if tt.want != "" && d.Validate() != nil {
				if _, _, err := simulate.Generate(c); err == nil || err.Error() != tt.want {
					t.Fatalf("Generate() error = %v, want %q", err, tt.want)
				}
			}
		})
	}
}

func TestSetDefaults(t *testing.T) {
	var c simulate.Config
	c.SetDefaults()
	want := simulate.Config{Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), Days: 1, Mix: simulate.Mix{Jobs: 40, Agents: 20, Albums: 20, Messages: 20},
		Order: simulate.OrderTime, Rate: 100, GitHubPayloads: simulate.PayloadsTrimmed}
	if c != want {
		t.Fatalf("SetDefaults() = %+v, want %+v", c, want)
	}
	c = simulate.Config{Start: time.Date(2026, 3, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600)), Days: 3, Mix: simulate.Mix{Messages: 1},
		Rate: 7, GitHubPayloads: simulate.PayloadsFull}
	c.SetDefaults()
	if c.Start.Location() != time.UTC || c.Days != 3 || c.Mix != (simulate.Mix{Messages: 1}) || c.Order != simulate.OrderTime || c.Rate != 7 ||
		c.GitHubPayloads != simulate.PayloadsFull {
		t.Fatalf("SetDefaults() changed set fields: %+v", c)
	}
	// OrderSubject has no rate: a zero Rate stays zero.
	c = simulate.Config{Order: simulate.OrderSubject}
	c.SetDefaults()
	if c.Rate != 0 {
		t.Fatalf("SetDefaults() set Rate %d in OrderSubject", c.Rate)
	}
}

func marshalAll(t testing.TB, evs []schema.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func generate(t testing.TB, cfg simulate.Config) ([]schema.Event, simulate.Stats) {
	t.Helper()
	evs, st, err := simulate.Generate(cfg)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, err)
	}
	return evs, st
}

func TestDeterminism(t *testing.T) {
	for _, cfg := range []simulate.Config{
		{Seed: 42, Events: 3000, Days: 2},
		{Seed: 42, Events: 3000, Days: 2, Order: simulate.OrderSubject},
		{Seed: 42, Events: 3000, Days: 2, Rate: 7, GitHubPayloads: simulate.PayloadsFull},
	} {
		t.Run(string(cfg.Order)+"/"+string(cfg.GitHubPayloads), func(t *testing.T) { testDeterminism(t, cfg) })
	}
}

func testDeterminism(t *testing.T, cfg simulate.Config) {
	a, sa := generate(t, cfg)
	b, sb := generate(t, cfg)
	ja, jb := marshalAll(t, a), marshalAll(t, b)
	if !bytes.Equal(ja, jb) {
		t.Fatal("same seed and config gave different events")
	}
	if sa.Events != sb.Events || sa.Redeliveries != sb.Redeliveries || sa.OutOfOrder != sb.OutOfOrder ||
		!maps.Equal(sa.PerDomain, sb.PerDomain) || !maps.Equal(sa.PerType, sb.PerType) {
		t.Fatalf("same seed gave different stats: %+v vs %+v", sa, sb)
	}

	var streamed []schema.Event
	ss, err := simulate.Stream(cfg, func(e schema.Event) error {
		streamed = append(streamed, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(marshalAll(t, streamed), ja) || ss.Events != sa.Events {
		t.Fatal("Stream and Generate differ")
	}

	cfg.Seed = 43
	c, _ := generate(t, cfg)
	if bytes.Equal(marshalAll(t, c), ja) {
		t.Fatal("different seeds gave the same events")
	}
	cfg.Seed = 42
	cfg.Start = time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
	d, _ := generate(t, cfg)
	if bytes.Equal(marshalAll(t, d), ja) {
		t.Fatal("different starts gave the same events")
	}
}

// TestDeterminismGolden pins the output of small runs in reviewable files
// under testdata/: the generator uses integer arithmetic only, so the bytes
// are the same on every platform. A deliberate change of the generator (or
// of a schema payload type it marshals) changes a file; refresh it with
// -update and review the diff. The subject and time runs are pinned as the
// events themselves (NDJSON, each under 300 KB; OrderSubject's file is the
// output of the first generator, kept byte for byte); the full-payload run
// (425 KB of NDJSON) as one digest per event: its envelope with data
// replaced by the SHA-256 of the data's bytes.
func TestDeterminismGolden(t *testing.T) {
	tests := []struct {
		name   string
		cfg    simulate.Config
		file   string
		digest bool
	}{
		{"subject", simulate.Config{Seed: 7, Events: 300, Days: 2, Order: simulate.OrderSubject}, "determinism_subject.golden.ndjson", false},
		{"time", simulate.Config{Seed: 7, Events: 300, Days: 2}, "determinism_time.golden.ndjson", false},
		{"time full payloads", simulate.Config{Seed: 7, Events: 300, Days: 2, GitHubPayloads: simulate.PayloadsFull}, "determinism_time_full.digest.golden.ndjson", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, _ := generate(t, tt.cfg)
			got := marshalAll(t, evs)
			if tt.digest {
				got = digestAll(t, got)
			}
			golden.Check(t, filepath.Join("testdata", tt.file), got)
		})
	}
}

// digestAll turns NDJSON events into one line per event: the envelope as
// generated, with data replaced by data_sha256, the SHA-256 of its bytes.
func digestAll(t *testing.T, ndjson []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSuffix(ndjson, []byte("\n")), []byte("\n")) {
		var env map[string]json.RawMessage
		if err := json.Unmarshal(line, &env); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(env["data"])
		delete(env, "data")
		env["data_sha256"], _ = json.Marshal(hex.EncodeToString(sum[:]))
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// check verifies the invariants every run must hold and returns the stats it
// recomputed from the events.
func check(t *testing.T, cfg simulate.Config, evs []schema.Event, st simulate.Stats) {
	t.Helper()
	cfg.SetDefaults()
	if len(evs) != cfg.Events {
		t.Fatalf("got %d events, want exactly %d", len(evs), cfg.Events)
	}
	end := cfg.Start.AddDate(0, 0, cfg.Days)
	type key struct{ subject, id string }
	first := map[key][]byte{}
	maxTime := map[string]time.Time{}
	got := simulate.Stats{PerDomain: map[schema.Domain]int{}, PerType: map[string]int{}}
	for i, e := range evs {
		orig := e
		if _, err := schema.Validate(&e); err != nil {
			t.Fatalf("event %d (%s %s) is invalid: %v", i, e.Type, e.ID, err)
		}
		if e.Subject != orig.Subject || orig.SpecVersion != schema.SpecVersion || e.RecordedAt != nil {
			t.Fatalf("event %d: envelope not normalised: %+v", i, orig)
		}
		if e.Time.Before(cfg.Start) || !e.Time.Before(end) {
			t.Fatalf("event %d: time %s outside [%s, %s)", i, e.Time, cfg.Start, end)
		}
		if !uuidRE.MatchString(e.ID) {
			t.Fatalf("event %d: id %q is not a UUID", i, e.ID)
		}
		k, _ := schema.KindOf(e.Type)
		got.Events++
		got.PerDomain[k.Domain]++
		got.PerType[e.Type]++
		line, _ := json.Marshal(e)
		if prev, dup := first[key{e.Subject, e.ID}]; dup {
			got.Redeliveries++
			if !bytes.Equal(prev, line) {
				t.Fatalf("event %d: redelivery of %s differs from the original:\n%s\n%s", i, e.ID, prev, line)
			}
			continue
		}
		first[key{e.Subject, e.ID}] = line
		if m, ok := maxTime[e.Subject]; ok && e.Time.Before(m) {
			got.OutOfOrder++
		} else {
			maxTime[e.Subject] = e.Time
		}
	}
	if got.Events != st.Events || got.Redeliveries != st.Redeliveries || got.OutOfOrder != st.OutOfOrder ||
		!maps.Equal(got.PerDomain, st.PerDomain) || !maps.Equal(got.PerType, st.PerType) {
		t.Fatalf("Stats = %+v, recomputed from the events %+v", st, got)
	}
}

func TestGenerateInvariants(t *testing.T) {
	tests := []struct {
		name string
		cfg  simulate.Config
	}{
		{"one event", simulate.Config{Seed: 1, Events: 1}},
		{"two events", simulate.Config{Seed: 2, Events: 2}},
		{"ten events", simulate.Config{Seed: 3, Events: 10}},
		{"default mix", simulate.Config{Seed: 4, Events: 1000}},
		{"several days", simulate.Config{Seed: 5, Events: 4000, Days: 7}},
		{"leap day start", simulate.Config{Seed: 6, Events: 500, Start: time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), Days: 2}},
		{"dense", simulate.Config{Seed: 7, Events: 20000, Days: 1}},
		{"sparse", simulate.Config{Seed: 8, Events: 300, Days: 30}},
		{"jobs only", simulate.Config{Seed: 9, Events: 800, Mix: simulate.Mix{Jobs: 1}}},
		{"agents only", simulate.Config{Seed: 10, Events: 800, Mix: simulate.Mix{Agents: 1}}},
		{"albums only", simulate.Config{Seed: 11, Events: 800, Mix: simulate.Mix{Albums: 1}}},
		{"messages only", simulate.Config{Seed: 12, Events: 800, Mix: simulate.Mix{Messages: 1}}},
		{"negative seed", simulate.Config{Seed: -99, Events: 700}},
		{"subject order", simulate.Config{Seed: 13, Events: 3000, Days: 2, Order: simulate.OrderSubject}},
		{"full payloads", simulate.Config{Seed: 14, Events: 1500, GitHubPayloads: simulate.PayloadsFull}},
		{"slow rate", simulate.Config{Seed: 15, Events: 3000, Rate: 1}},
		{"fast rate", simulate.Config{Seed: 16, Events: 3000, Rate: simulate.MaxRate}},
		{"squeezed day", simulate.Config{Seed: 17, Events: 2000, Days: 1, Rate: 1, Mix: simulate.Mix{Messages: 1}}},
		{"fewer events than days", simulate.Config{Seed: 18, Events: 5, Days: 30}},
		{"a year", simulate.Config{Seed: 19, Events: 3000, Days: 366}},
		{"weekend", simulate.Config{Seed: 20, Events: 2000, Start: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), Days: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, st := generate(t, tt.cfg)
			check(t, tt.cfg, evs, st)
			m := tt.cfg.Mix
			for d, w := range map[schema.Domain]int{schema.DomainGitHub: m.Jobs, schema.DomainStates: m.Agents, schema.DomainAlbums: m.Albums, schema.DomainMessages: m.Messages} {
				if !m.IsZero() && w == 0 && st.PerDomain[d] != 0 {
					t.Errorf("domain %s has weight 0 but %d events", d, st.PerDomain[d])
				}
			}
		})
	}
}

// TestRealismSmall checks the shapes a 1000-event run must contain, in
// both orders: in OrderTime, ten seconds of traffic.
func TestRealismSmall(t *testing.T) {
	for _, o := range []simulate.Order{simulate.OrderTime, simulate.OrderSubject} {
		t.Run(string(o), func(t *testing.T) { testRealismSmall(t, simulate.Config{Seed: 1, Events: 1000, Order: o}) })
	}
}

func testRealismSmall(t *testing.T, cfg simulate.Config) {
	evs, st := generate(t, cfg)
	for _, d := range []schema.Domain{schema.DomainGitHub, schema.DomainStates, schema.DomainAlbums, schema.DomainMessages} {
		if st.PerDomain[d] == 0 {
			t.Errorf("no %s events in a 1000-event run", d)
		}
	}
	if st.Redeliveries == 0 {
		t.Error("no redelivered (same subject and id) events")
	}
	if st.OutOfOrder == 0 {
		t.Error("no out-of-order events")
	}
	agent, nonAgent := 0, 0
	for _, e := range evs {
		if e.Type != schema.TypeExecutionStatusChange {
			continue
		}
		p, _ := schema.Decode(e)
		if p.(*schema.ExecutionStatusChange).IsAgent() {
			agent++
		} else {
			nonAgent++
		}
	}
	if agent == 0 || nonAgent == 0 {
		t.Errorf("agent executions: %d events, non-agent: %d; want both", agent, nonAgent)
	}
}

// TestRealism checks the lifecycles of a larger run domain by domain, in
// both orders. In OrderTime each day holds 500 seconds of traffic (20 events
// a second), whose lifecycles are partial at both ends: a subject's events
// may start after its first one and stop before its last.
func TestRealism(t *testing.T) {
	for _, cfg := range []simulate.Config{
		{Seed: 2026, Events: 30000, Days: 3, Order: simulate.OrderSubject},
		{Seed: 2026, Events: 30000, Days: 3, Order: simulate.OrderTime, Rate: 20},
	} {
		t.Run(string(cfg.Order), func(t *testing.T) { testRealism(t, cfg) })
	}
}

func testRealism(t *testing.T, cfg simulate.Config) {
	evs, st := generate(t, cfg)
	check(t, cfg, evs, st)

	bySubject := map[string][]schema.Event{}
	var order []string
	for _, e := range evs {
		if _, ok := bySubject[e.Subject]; !ok {
			order = append(order, e.Subject)
		}
		bySubject[e.Subject] = append(bySubject[e.Subject], e)
	}
	decode := func(e schema.Event) schema.Payload {
		p, err := schema.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Mix: each domain's share of events within 5 points of its weight.
	for d, w := range map[schema.Domain]float64{schema.DomainGitHub: .4, schema.DomainStates: .2, schema.DomainAlbums: .2, schema.DomainMessages: .2} {
		share := float64(st.PerDomain[d]) / float64(st.Events)
		if share < w-.05 || share > w+.05 {
			t.Errorf("domain %s: %.1f%% of events, want about %.0f%%", d, share*100, w*100)
		}
	}
	// Every day has events.
	days := map[string]int{}
	for _, e := range evs {
		days[e.Time.Format("2006-01-02")]++
	}
	if len(days) != cfg.Days {
		t.Errorf("events on %d days, want %d: %v", len(days), cfg.Days, days)
	}

	t.Run("github", func(t *testing.T) {
		counts := map[string]int{}
		installations := map[int64]bool{}
		for _, subject := range order {
			list := bySubject[subject]
			if !strings.HasPrefix(subject, "github/") || !strings.Contains(subject, "/job/") {
				continue
			}
			queuedIDs := map[string]bool{}
			var sawInProgress, inProgressFirst, interrupted, rescheduledThenAttached bool
			for i, e := range list {
				switch p := decode(e).(type) {
				case *schema.WorkflowJobWebhook:
					installations[p.InstallationID()] = true
					if !e.Time.Equal(p.EventTime()) {
						t.Fatalf("%s %s: time %s, EventTime %s", subject, e.Type, e.Time, p.EventTime())
					}
					owner := p.Repository.Owner.Login
					if e.Source != "https://github.com/"+owner || !strings.HasPrefix(p.Repository.FullName, owner+"/") {
						t.Fatalf("%s: source %q for repository %q", subject, e.Source, p.Repository.FullName)
					}
					j := p.WorkflowJob
					if len(j.HeadSHA) != 40 || j.RunAttempt < 1 || j.RunAttempt > 2 || len(j.Labels) == 0 || j.HTMLURL == "" || j.WorkflowName == "" {
						t.Fatalf("%s: incomplete workflow_job %+v", subject, j)
					}
					if j.RunAttempt == 2 {
						counts["rerun"]++
					}
					if p.Installation == nil && p.InstallationID() != 0 {
						t.Fatalf("%s: no installation but id %d", subject, p.InstallationID())
					}
					switch p.Action {
					case "queued":
						queuedIDs[e.ID] = true
						if sawInProgress {
							inProgressFirst = true
						}
						if j.RunnerName != nil || j.Conclusion != nil || j.StartedAt == nil || !j.StartedAt.Equal(*j.CreatedAt) {
							t.Fatalf("%s: queued payload %+v", subject, j)
						}
					case "in_progress":
						sawInProgress = true
						if j.RunnerName == nil || j.StartedAt.Before(*j.CreatedAt) {
							t.Fatalf("%s: in_progress payload %+v", subject, j)
						}
					case "completed":
						counts["conclusion:"+*j.Conclusion]++
						if j.CompletedAt == nil || j.CompletedAt.Before(*j.StartedAt) {
							t.Fatalf("%s: completed payload %+v", subject, j)
						}
					case "waiting":
						counts["waiting"]++
						if p.Deployment == nil {
							t.Fatalf("%s: waiting without deployment", subject)
						}
					}
				case *schema.RunnerEvent:
					counts[e.Type]++
					switch e.Type {
					case schema.TypeRunnerAttached:
						if !regexp.MustCompile(`^i-0[0-9a-f]{16}$`).MatchString(p.InstanceID) {
							t.Fatalf("%s: instance id %q", subject, p.InstanceID)
						}
						if i > 0 && list[i-1].Type == schema.TypeRunnerScheduled && i > 1 && list[i-2].Type == schema.TypeRunnerRescheduled {
							rescheduledThenAttached = true
						}
					case schema.TypeRunnerScheduled:
						if p.ScheduledAt == nil || !p.ScheduledAt.Equal(e.Time) || p.InstanceType == "" {
							t.Fatalf("%s: scheduled %+v", subject, p)
						}
						counts["lifecycle:"+p.InstanceLifecycle]++
						if p.PoolName != "" {
							counts["pool"]++
						}
					case schema.TypeRunnerInterrupted:
						interrupted = true
						if p.InstanceLifecycle != "spot" {
							t.Fatalf("%s: interrupted %s instance", subject, p.InstanceLifecycle)
						}
					case schema.TypeRunnerTerminated:
						if p.UsageInSeconds == nil || p.UsageInDollars == nil || *p.UsageInSeconds <= 0 || *p.UsageInDollars <= 0 {
							t.Fatalf("%s: terminated without usage: %+v", subject, p)
						}
					}
				}
			}
			if len(queuedIDs) > 1 {
				counts["queued twice"]++
			}
			if inProgressFirst {
				counts["in_progress before queued"]++
			}
			if interrupted && rescheduledThenAttached {
				counts["interrupted and rescheduled"]++
			}
		}
		for _, want := range []string{"rerun", "conclusion:success", "conclusion:failure", "conclusion:cancelled", "conclusion:skipped",
			"waiting", "queued twice", "in_progress before queued", "interrupted and rescheduled", "lifecycle:spot", "lifecycle:on-demand", "pool",
			schema.TypeRunnerTerminated} {
			if counts[want] == 0 {
				t.Errorf("no %q in the GitHub jobs (%v)", want, counts)
			}
		}
		if !installations[0] || len(installations) < 3 {
			t.Errorf("installations %v: want several, GHES (0) included", installations)
		}
		if st.PerType[schema.TypeDeploymentApproved] == 0 || st.PerType[schema.TypeDeploymentRejected] == 0 || st.PerType[schema.TypeDeploymentPending] == 0 {
			t.Errorf("deployment events: %v", st.PerType)
		}
		if c := counts["conclusion:success"]; c*100 < (counts["conclusion:failure"]+c)*80 {
			t.Errorf("success is not the usual conclusion: %v", counts)
		}
	})

	t.Run("states", func(t *testing.T) {
		status := map[string]int{}
		stillRunning, nonAgent := 0, 0
		for _, subject := range order {
			list := bySubject[subject]
			if !strings.HasPrefix(subject, "states/") {
				continue
			}
			var last *schema.ExecutionStatusChange
			for _, e := range list {
				p := decode(e).(*schema.ExecutionStatusChange)
				if e.Source != "aws.states" || !strings.HasPrefix(p.StateMachineArn, "arn:aws:states:us-west-2:123456789012:stateMachine:") {
					t.Fatalf("%s: source %q, machine %q", subject, e.Source, p.StateMachineArn)
				}
				if p.Terminal() && !e.Time.Equal(time.UnixMilli(*p.StopDate)) || !p.Terminal() && !e.Time.Equal(time.UnixMilli(p.StartDate)) {
					t.Fatalf("%s: time %s does not match the %s dates", subject, e.Time, p.Status)
				}
				if !p.IsAgent() {
					nonAgent++
					if p.StateMachineTags == nil {
						t.Fatalf("%s: tags %v", subject, p.StateMachineTags)
					}
				}
				status[p.Status]++
				if last == nil || p.Terminal() {
					last = p
				}
			}
			if !last.Terminal() {
				stillRunning++
			}
		}
		for _, s := range []string{schema.ExecutionRunning, schema.ExecutionSucceeded, schema.ExecutionFailed, schema.ExecutionTimedOut, schema.ExecutionAborted} {
			if status[s] == 0 {
				t.Errorf("no %s executions: %v", s, status)
			}
		}
		terminal := status[schema.ExecutionSucceeded] + status[schema.ExecutionFailed] + status[schema.ExecutionTimedOut] + status[schema.ExecutionAborted]
		if share := float64(status[schema.ExecutionSucceeded]) / float64(terminal); share < .72 || share > .88 {
			t.Errorf("SUCCEEDED is %.0f%% of terminal statuses, want about 80%%", share*100)
		}
		if stillRunning == 0 || nonAgent == 0 {
			t.Errorf("still running: %d, non-agent events: %d; want both", stillRunning, nonAgent)
		}
	})

	t.Run("albums", func(t *testing.T) {
		counts := map[string]int{}
		for _, subject := range order {
			list := bySubject[subject]
			if !strings.HasPrefix(subject, "albums/execution/") {
				continue
			}
			var wt string
			for _, e := range list {
				switch p := decode(e).(type) {
				case *schema.AlbumExecutionEvent:
					wt = p.WorkflowType
					if e.Source != "streamfold.albums/"+wt {
						t.Fatalf("%s: source %q", subject, e.Source)
					}
					counts[e.Type]++
					counts[wt]++
					if e.Type == schema.TypeAlbumExecutionCompleted {
						c := *p.EstimatedCost
						if wt == schema.WorkflowStepFunctions && (c < .004 || c > .009) || wt == schema.WorkflowDurableFunctions && (c < .001 || c > .004) {
							t.Fatalf("%s: %s cost %v", subject, wt, c)
						}
					}
				case *schema.AlbumEvent:
					switch e.Type {
					case schema.TypeAlbumExtracted:
						if *p.Year < 1947 || *p.Year > 2027 || p.AlbumIndex > 8 {
							t.Fatalf("%s: extracted %+v", subject, p)
						}
					case schema.TypeAlbumValidated:
						if *p.Year != *p.YearOriginal {
							counts["year corrected"]++
						}
					case schema.TypeAlbumPriced:
						if *p.PriceEstimate < 5 || *p.PriceEstimate > 120 || *p.PriceConfidence < .3 || *p.PriceConfidence > .99 {
							t.Fatalf("%s: priced %+v", subject, p)
						}
						counts["source:"+p.PriceSource]++
					}
				}
			}
		}
		for _, want := range []string{schema.WorkflowStepFunctions, schema.WorkflowDurableFunctions, "year corrected",
			schema.TypeAlbumExecutionWaiting, schema.TypeAlbumExecutionFailed, "source:discogs-api", "source:ebay", "source:manual"} {
			if counts[want] == 0 {
				t.Errorf("no %q in the album executions (%v)", want, counts)
			}
		}
		sf, ldf := float64(counts[schema.WorkflowStepFunctions]), float64(counts[schema.WorkflowDurableFunctions])
		if r := sf / (sf + ldf); r < .4 || r > .6 {
			t.Errorf("sf share %.2f, want about half", r)
		}
		for _, typ := range []string{schema.TypeTaskCreated, schema.TypeTaskCompleted, schema.TypeTaskExpired} {
			if st.PerType[typ] == 0 {
				t.Errorf("no %s events", typ)
			}
		}
	})

	t.Run("messages", func(t *testing.T) {
		retried := 0
		for _, subject := range order {
			list := bySubject[subject]
			if !strings.HasPrefix(subject, "messages/") {
				continue
			}
			lifecycle, _ := schema.AggregateOf(schema.AggregateMessage)
			rank := func(eventType string) int {
				st, _ := schema.StatusOf(eventType)
				r, _ := lifecycle.Lifecycle.Rank(st)
				return r
			}
			lastRank, lastRetry := -1, -1
			for i, e := range list {
				p := decode(e).(*schema.MessageEvent)
				if e.Source != "rez_agent/"+p.Stage {
					t.Fatalf("%s: source %q for stage %q", subject, e.Source, p.Stage)
				}
				if rank(e.Type) < lastRank {
					t.Fatalf("%s: %s after a later state", subject, e.Type)
				}
				lastRank = rank(e.Type)
				// Every event that moves a message to processing (a first
				// attempt or a retry) counts one more retry.
				if st, _ := schema.StatusOf(e.Type); st == "processing" {
					if i == 0 && cfg.Order == simulate.OrderTime {
						lastRetry = *p.RetryCount - 1 // the message began before the slice
					}
					if *p.RetryCount != lastRetry+1 {
						t.Fatalf("%s: retry_count %d after %d", subject, *p.RetryCount, lastRetry)
					}
					lastRetry = *p.RetryCount
				}
			}
			if lastRetry > 0 {
				retried++
			}
		}
		if retried == 0 || st.PerType[schema.TypeMessageFailed] == 0 || st.PerType[schema.TypeMessageCompleted] == 0 {
			t.Errorf("retried messages: %d, types %v", retried, st.PerType)
		}
	})
}

func TestStreamErrors(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	st, err := simulate.Stream(simulate.Config{Seed: 1, Events: 100}, func(schema.Event) error {
		n++
		if n == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || st.Events != 10 {
		t.Fatalf("Stream() = %+v, %v; want 10 events and the emit error", st, err)
	}
	if _, err := simulate.Stream(simulate.Config{Seed: 1, Events: 1}, nil); err == nil {
		t.Fatal("Stream(nil emit) did not fail")
	}
	if _, err := simulate.Stream(simulate.Config{Events: 1, Days: 400}, func(schema.Event) error { return nil }); err == nil ||
		err.Error() != "simulate: Config.Days: must be between 1 and 366" {
		t.Fatalf("Stream(bad config) = %v", err)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, cfg := range []simulate.Config{
		{Order: simulate.OrderTime},
		{Order: simulate.OrderTime, GitHubPayloads: simulate.PayloadsFull},
		{Order: simulate.OrderSubject},
	} {
		b.Run(string(cfg.Order)+"/"+string(cfg.GitHubPayloads), func(b *testing.B) {
			cfg.Events = 10000
			total := 0
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				cfg.Seed = int64(i)
				evs, _, err := simulate.Generate(cfg)
				if err != nil {
					b.Fatal(err)
				}
				total += len(evs)
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "events/s")
		})
	}
}
