package opsview

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

var now = time.Date(2030, 1, 15, 12, 0, 0, 0, time.UTC)

type fakeRecords struct {
	progs    []opsrec.Progress
	last     *opsrec.Result
	gaps     []opsrec.Gap
	since    time.Time
	progErr  error
	progRead int
}

func (f *fakeRecords) Progresses(context.Context) ([]opsrec.Progress, error) {
	f.progRead++
	return slices.Clone(f.progs), f.progErr
}

func (f *fakeRecords) LastResult(context.Context) (opsrec.Result, bool, error) {
	if f.last == nil {
		return opsrec.Result{}, false, nil
	}
	return *f.last, true, nil
}

func (f *fakeRecords) Gaps(_ context.Context, since time.Time) ([]opsrec.Gap, error) {
	f.since = since
	var out []opsrec.Gap
	for _, g := range f.gaps {
		if !g.Noticed.Before(since) {
			out = append(out, g)
		}
	}
	return out, nil
}

type fakeLetters map[string][]deadletter.Letter

func (f fakeLetters) List(_ context.Context, consumer string) ([]deadletter.Letter, error) {
	if consumer == "broken" {
		return nil, errors.New("injected")
	}
	return f[consumer], nil
}

var naming = schema.Naming{Prefix: "acme", Stage: "prod"}

func progress(consumer, shard string, updated time.Time, lag time.Duration, records int64) opsrec.Progress {
	return opsrec.Progress{Consumer: consumer, Shard: shard, LastSeq: "100", LastRecord: updated.Add(-lag), Updated: updated,
		Lag: lag, Records: records, Since: updated.Add(-time.Minute)}
}

func TestConsumers(t *testing.T) {
	progs := []opsrec.Progress{
		// projector: two current shards 1 and 3 min old, a closed one 5 h
		// old, one 2 days old (hidden).
		progress("projector", "shard-a", now.Add(-time.Minute), 2*time.Second, 600),
		progress("projector", "shard-b", now.Add(-3*time.Minute), 9*time.Second, 120),
		progress("projector", "shard-old", now.Add(-5*time.Hour), time.Hour, 6000),
		progress("projector", "shard-older", now.Add(-48*time.Hour), 0, 1),
		// archiver: stale (last beat 2 h ago).
		progress("archiver", "shard-a", now.Add(-2*time.Hour), 30*time.Second, 60),
		// another consumer.
		progress("projector-2", "shard-a", now.Add(-time.Second), 0, 0),
	}
	got := Consumers(progs, []string{"projector", "archiver", "ingest-like"}, now, 10*time.Minute, 24*time.Hour)
	var names []string
	for _, c := range got {
		names = append(names, c.Consumer+":"+c.State)
	}
	if want := []string{"projector:ok", "archiver:stale", "ingest-like:none", "projector-2:ok"}; !slices.Equal(names, want) {
		t.Fatalf("consumers %v, want %v", names, want)
	}
	p := got[0]
	if p.CurrentShards != 2 || p.LagSeconds != 9 || p.RecordsPerSecond != 12 || p.Records != 720 || p.HiddenShards != 1 {
		t.Errorf("projector = %+v, want 2 current shards, lag 9 s, 12 records/s, 720 records, 1 hidden", p)
	}
	if *p.HeartbeatAgeSeconds != 60 || !p.LastHeartbeat.Equal(now.Add(-time.Minute)) || !p.LastRecord.Equal(now.Add(-time.Minute-2*time.Second)) {
		t.Errorf("projector heartbeat %v (age %v), last record %v", p.LastHeartbeat, *p.HeartbeatAgeSeconds, p.LastRecord)
	}
	var shards []string
	for _, s := range p.Shards {
		shards = append(shards, s.Shard)
		if s.Current != (s.Shard != "shard-old") {
			t.Errorf("shard %s current = %v", s.Shard, s.Current)
		}
	}
	if want := []string{"shard-a", "shard-b", "shard-old"}; !slices.Equal(shards, want) {
		t.Errorf("projector shards %v, want %v (newest first, the 2-day-old one hidden)", shards, want)
	}
	if a := got[1]; *a.HeartbeatAgeSeconds != 7200 || a.LagSeconds != 30 || a.CurrentShards != 1 {
		t.Errorf("archiver = %+v", a)
	}
	if n := got[2]; n.HeartbeatAgeSeconds != nil || n.Shards == nil || len(n.Shards) != 0 {
		t.Errorf("a consumer without heartbeat = %+v, want no age and an empty shard list", n)
	}
}

func TestOverview(t *testing.T) {
	rec := &fakeRecords{
		progs: []opsrec.Progress{progress("projector", "s", now.Add(-time.Minute), time.Second, 60)},
		last: &opsrec.Result{Finished: now.Add(-3 * time.Hour), From: now.Add(-27 * time.Hour), To: now.Add(-3 * time.Hour), Events: 1000, Heal: true,
			Rows: []opsrec.DayGaps{
				{Domain: "messages", Day: "2030-01-14", Events: 600, MissingProjection: 2, MissingArchive: 1, Healed: 3},
				{Domain: "github", Day: "2030-01-14", Events: 400, Conflicts: 1},
			}},
	}
	for i := range 5 {
		rec.gaps = append(rec.gaps, opsrec.Gap{Consumer: "archiver", Kind: opsrec.GapTrimmed, Noticed: now.Add(-time.Duration(9-i) * 24 * time.Hour)})
	}
	v, err := New(Config{Records: rec, DeadLetters: fakeLetters{}, Naming: naming, MaxGaps: 2})
	if err != nil {
		t.Fatal(err)
	}
	o, err := v.Overview(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.since.Equal(now.Add(-7*24*time.Hour)) || !o.GapsSince.Equal(rec.since) {
		t.Errorf("gaps read since %v (answer %v), want 7 days before now", rec.since, o.GapsSince)
	}
	// Gaps noticed 9..5 days ago: the last 7 days hold 3 (7, 6, 5 days ago);
	// newest first, at most 2.
	if len(o.Gaps) != 2 || !o.GapsTruncated || !o.Gaps[0].Noticed.Equal(now.Add(-5*24*time.Hour)) || !o.Gaps[1].Noticed.Equal(now.Add(-6*24*time.Hour)) {
		t.Errorf("gaps %+v truncated %v, want the 2 newest of 3", o.Gaps, o.GapsTruncated)
	}
	r := o.LastReconcile
	if r == nil || r.TotalGaps != 4 || r.TotalHealed != 3 || r.AgeSeconds != 3*3600 || !r.Heal || r.Events != 1000 {
		t.Fatalf("last reconcile %+v, want 4 gaps, 3 healed, 3 h old", r)
	}
	if len(o.Consumers) != 2 || o.Consumers[0].State != "ok" || o.Consumers[1].State != "none" || o.StaleAfterSeconds != 600 {
		t.Errorf("consumers %+v", o.Consumers)
	}
	// The JSON names the API documents, null without a reconcile run.
	b, _ := json.Marshal(o)
	for _, k := range []string{`"lastReconcile":{`, `"totalGaps":4`, `"rows":[`, `"consumers":[`, `"heartbeatAgeSeconds":null`, `"gapsTruncated":true`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("overview JSON lacks %s:\n%s", k, b)
		}
	}
	rec.last, rec.gaps = nil, nil
	o, err = v.Overview(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(o)
	if !strings.Contains(string(b), `"lastReconcile":null`) || !strings.Contains(string(b), `"gaps":[]`) {
		t.Errorf("overview without runs or gaps: %s", b)
	}
	rec.progErr = errors.New("injected")
	if _, err := v.Overview(context.Background(), now); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Errorf("overview with a failing read: %v", err)
	}
}

// streamLetter is a dead letter of a stream record of subject.
func streamLetter(t *testing.T, consumer, seq, subject, status string, at time.Time) deadletter.Letter {
	t.Helper()
	rec := events.DynamoDBEventRecord{EventID: "e" + seq, EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
		Keys:     map[string]events.DynamoDBAttributeValue{"subject": events.NewStringAttribute(subject), "id": events.NewStringAttribute("id-" + seq)},
		NewImage: map[string]events.DynamoDBAttributeValue{"subject": events.NewStringAttribute(subject), "type": events.NewStringAttribute("x")}}}
	d, err := deadletter.NewLetter(consumer, deadletter.ReasonPoison, rec, errors.New("projector: poison record: "+seq), at)
	if err != nil {
		t.Fatal(err)
	}
	d.Status = status
	return d
}

func TestDeadLetters(t *testing.T) {
	q, r := deadletter.StatusQuarantined, deadletter.StatusReplayed
	letters := fakeLetters{
		"projector": {
			streamLetter(t, "projector", "100", "messages/a", q, now.Add(-time.Hour)),
			streamLetter(t, "projector", "200", "messages/b", r, now.Add(-2*time.Hour)),
			streamLetter(t, "projector", "300", "messages/c", q, now.Add(-8*24*time.Hour)), // outside the 7 days
		},
		"archiver":    {streamLetter(t, "archiver", "150", "github/1/job/2", q, now.Add(-30*time.Minute))},
		"projector-2": {streamLetter(t, "projector-2", "50", "messages/z", q, now.Add(-10*time.Minute))},
	}
	rec := &fakeRecords{progs: []opsrec.Progress{progress("projector-2", "s", now, 0, 0)}}
	v, err := New(Config{Records: rec, DeadLetters: letters, Naming: naming})
	if err != nil {
		t.Fatal(err)
	}
	positions := func(l DeadLetterList) []string {
		var out []string
		for _, d := range l.Items {
			out = append(out, d.Consumer+"/"+strings.TrimLeft(strings.Split(d.Position, "#")[0], "0"))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		f      Filter
		want   []string
		total  int
		counts string
	}{
		{"defaults: every consumer, last 7 days, newest first", Filter{},
			[]string{"projector-2/50", "archiver/150", "projector/100", "projector/200"}, 4,
			"projector 1/1, archiver 1/0, ingest 0/0, projector-2 1/0"},
		{"one consumer", Filter{Consumer: "projector"}, []string{"projector/100", "projector/200"}, 2, "projector 1/1"},
		{"quarantined only", Filter{Consumer: "projector", Status: q}, []string{"projector/100"}, 1, "projector 1/1"},
		{"replayed only", Filter{Status: r}, []string{"projector/200"}, 1, "projector 1/1, archiver 1/0, ingest 0/0, projector-2 1/0"},
		{"since", Filter{Consumer: "projector", Since: now.Add(-9 * 24 * time.Hour)}, []string{"projector/100", "projector/200", "projector/300"}, 3, "projector 2/1"},
		{"limit keeps the newest, total all", Filter{Limit: 2}, []string{"projector-2/50", "archiver/150"}, 4,
			"projector 1/1, archiver 1/0, ingest 0/0, projector-2 1/0"},
		{"unknown consumer is empty", Filter{Consumer: "nobody"}, nil, 0, "nobody 0/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := v.DeadLetters(context.Background(), now, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := positions(l); !slices.Equal(got, tc.want) || l.Total != tc.total {
				t.Errorf("items %v (total %d), want %v (total %d)", got, l.Total, tc.want, tc.total)
			}
			var counts []string
			for _, c := range l.Consumers {
				counts = append(counts, c.Consumer+" "+strconv.Itoa(c.Quarantined)+"/"+strconv.Itoa(c.Replayed))
			}
			if got := strings.Join(counts, ", "); got != tc.counts {
				t.Errorf("counts %q, want %q", got, tc.counts)
			}
			if l.Items == nil {
				t.Error("items is nil: the JSON must be [], not null")
			}
		})
	}
	l, err := v.DeadLetters(context.Background(), now, Filter{Consumer: "projector"})
	if err != nil {
		t.Fatal(err)
	}
	d := l.Items[0]
	if d.Subject != "messages/a" || d.Reason != "poison" || d.Error != "projector: poison record: 100" || !d.QuarantinedAt.Equal(now.Add(-time.Hour)) || d.EventID != "e100" {
		t.Errorf("letter %+v", d)
	}
	if want := "streamfold deadletter replay --consumer projector --position '" + d.Position + "' --prefix acme --stage prod"; d.Replay != want {
		t.Errorf("replay %q, want %q", d.Replay, want)
	}
	if l.Items[1].Replay != "" || l.Items[1].ReplayNote != "replayed already" {
		t.Errorf("a replayed letter: replay %q note %q", l.Items[1].Replay, l.Items[1].ReplayNote)
	}
	if !l.Since.Equal(now.Add(-7 * 24 * time.Hour)) {
		t.Errorf("since %v, want 7 days before now", l.Since)
	}
}

func TestDeadLettersFilterErrors(t *testing.T) {
	v, err := New(Config{Records: &fakeRecords{}, DeadLetters: fakeLetters{}, Naming: naming, MaxLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f     Filter
		field string
	}{
		{Filter{Status: "gone"}, "status"},
		{Filter{Limit: 101}, "limit"},
		{Filter{Limit: -1}, "limit"},
		{Filter{Since: now.Add(time.Second)}, "since"},
		{Filter{Consumer: strings.Repeat("c", 257)}, "consumer"},
	} {
		_, err := v.DeadLetters(context.Background(), now, tc.f)
		var fe *FilterError
		if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("filter %+v: error %v, want a FilterError on %s", tc.f, err, tc.field)
		}
	}
	if _, err := v.DeadLetters(context.Background(), now, Filter{Consumer: "broken"}); err == nil || errors.Is(err, ErrInvalidFilter) {
		t.Errorf("a failing read: %v, want a read error", err)
	}
}

func TestSubject(t *testing.T) {
	conflict := &ingest.ConflictError{Subject: "messages/k", ID: "ev-1",
		Stored: schema.Event{Subject: "messages/k", ID: "ev-1", Type: "t"}, New: schema.Event{Subject: "messages/k", ID: "ev-1", Type: "t", Time: now}}
	cl, err := ingest.ConflictLetter(conflict, now)
	if err != nil {
		t.Fatal(err)
	}
	keyless := streamLetter(t, "projector", "1", "messages/n", deadletter.StatusQuarantined, now)
	rec, _ := keyless.LambdaRecord()
	rec.Change.Keys = nil
	raw, _ := json.Marshal(rec)
	keyless.Record = string(raw)
	numeric := streamLetter(t, "projector", "2", "x", deadletter.StatusQuarantined, now)
	rec, _ = numeric.LambdaRecord()
	rec.Change.Keys = map[string]events.DynamoDBAttributeValue{"subject": events.NewNumberAttribute("7")}
	rec.Change.NewImage = nil
	raw, _ = json.Marshal(rec)
	numeric.Record = string(raw)
	for _, tc := range []struct {
		name string
		d    deadletter.Letter
		want string
	}{
		{"stream record key", streamLetter(t, "archiver", "1", "github/1/job/2", "quarantined", now), "github/1/job/2"},
		{"stream record new image", keyless, "messages/n"},
		{"a subject that is not a string", numeric, ""},
		{"ingest conflict", cl, "messages/k"},
		{"ingest EventBridge event", deadletter.Letter{Consumer: "ingest", Reason: "invalid", Record: `{"event":{}}`}, ""},
		{"undecodable record", deadletter.Letter{Consumer: "projector", Record: "{"}, ""},
	} {
		if got := Subject(tc.d); got != tc.want {
			t.Errorf("%s: subject %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReplayCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		d         deadletter.Letter
		cmd, note string
	}{
		{"projector", deadletter.Letter{Consumer: "projector", Position: "0001#e1", Status: "quarantined"},
			"streamfold deadletter replay --consumer projector --position '0001#e1' --prefix acme --stage prod", ""},
		{"archiver", deadletter.Letter{Consumer: "archiver", Position: "0002#e-2", Status: "quarantined"},
			"streamfold deadletter replay --consumer archiver --position '0002#e-2' --prefix acme --stage prod", ""},
		{"ingest, quoted", deadletter.Letter{Consumer: "ingest", Position: "2030-01-15T10:00:00Z#it's", Reason: "invalid", Status: "quarantined"},
			`streamfold deadletter replay --consumer ingest --position '2030-01-15T10:00:00Z#it'\''s' --prefix acme --stage prod`, ""},
		{"ingest conflict", deadletter.Letter{Consumer: "ingest", Reason: "conflict", Status: "quarantined"}, "", "a person decides"},
		{"replayed", deadletter.Letter{Consumer: "projector", Status: "replayed"}, "", "replayed already"},
		{"unknown consumer", deadletter.Letter{Consumer: "projector 2", Status: "quarantined"}, "",
			"streamfold deadletter list --consumer 'projector 2' --prefix acme --stage prod"},
	} {
		cmd, note := ReplayCommand(tc.d, naming)
		if cmd != tc.cmd || !strings.Contains(note, tc.note) || (tc.note == "") != (note == "") {
			t.Errorf("%s: %q, %q; want %q, a note with %q", tc.name, cmd, note, tc.cmd, tc.note)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{DeadLetters: fakeLetters{}, Naming: naming}, "Config.Records"},
		{Config{Records: &fakeRecords{}, Naming: naming}, "Config.DeadLetters"},
		{Config{Records: &fakeRecords{}, DeadLetters: fakeLetters{}}, "Config.Naming"},
		{Config{Records: &fakeRecords{}, DeadLetters: fakeLetters{}, Naming: naming, StaleAfter: -1}, "StaleAfter"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}
