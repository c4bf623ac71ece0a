package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opsview"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

// opsSeed writes the operations records of TestOperationsEndToEnd around
// now: heartbeats (a projector on two current shards and a closed one, an
// archiver whose last heartbeat is 2 hours old), two reconcile results (the
// newer with gaps in two domains, healed), three gaps (one older than the
// page's 7 days) and five dead letters (one older than 7 days, one
// replayed, an ingest conflict).
func opsSeed(t *testing.T, ddb opsrec.API, dl *deadletter.Table, n schema.Naming, now time.Time) {
	t.Helper()
	ctx := context.Background()
	st := opsrec.Store{API: ddb, Table: n.Table(schema.TableCheckpoints)}
	beat := func(consumer, shard string, ago, lag time.Duration, records int64) {
		upd := now.Add(-ago)
		p := opsrec.Progress{Consumer: consumer, Shard: shard, LastSeq: "4900000000000000000" + shard[len(shard)-1:], LastRecord: upd.Add(-lag),
			Updated: upd, Lag: lag, Records: records, Since: upd.Add(-time.Minute)}
		if err := st.PutProgress(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	beat("projector", "shardId-00000001", 30*time.Second, 2*time.Second, 1200) // 20/s
	beat("projector", "shardId-00000002", 45*time.Second, 5*time.Second, 600)  // 10/s
	beat("projector", "shardId-00000000", 5*time.Hour, 1*time.Second, 300)     // closed
	beat("archiver", "shardId-00000001", 2*time.Hour, 40*time.Second, 60)      // stale
	day := now.Add(-24 * time.Hour).Format("2006-01-02")
	older := opsrec.Result{Started: now.Add(-27*time.Hour - time.Minute), Finished: now.Add(-27 * time.Hour), From: now.Add(-51 * time.Hour), To: now.Add(-27 * time.Hour), Events: 90000}
	last := opsrec.Result{Started: now.Add(-3*time.Hour - 2*time.Minute), Finished: now.Add(-3 * time.Hour), From: now.Add(-27 * time.Hour), To: now.Add(-3 * time.Hour),
		Events: 125000, Heal: true, IDsPerKind: 20, ReadUnits: 15625, S3Requests: 40,
		Rows: []opsrec.DayGaps{
			{Domain: "github", Day: day, Events: 40000, Conflicts: 1, IDs: map[string][]string{"conflict": {"delivery-77"}}},
			{Domain: "messages", Day: day, Events: 60000, MissingProjection: 2, MissingArchive: 1, Healed: 3,
				IDs: map[string][]string{"projection": {"msg-a", "msg-b"}, "archive": {"msg-c"}}},
		}}
	for _, r := range []opsrec.Result{older, last} {
		if err := st.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []opsrec.Gap{
		{Consumer: "archiver", Kind: opsrec.GapTrimmed, Shard: "shardId-00000001", From: now.Add(-28 * time.Hour), To: now.Add(-26 * time.Hour), Records: 350,
			Noticed: now.Add(-2 * time.Hour), Detail: "TrimmedDataAccessException: the checkpoint is older than the stream's 24 hours"},
		{Consumer: "projector", Kind: opsrec.GapLatest, Shard: "shardId-00000001", Noticed: now.Add(-26 * time.Hour), Detail: "started at LATEST"},
		{Consumer: "projector", Kind: opsrec.GapSequenceJump, Noticed: now.Add(-8 * 24 * time.Hour)},
	} {
		if err := st.PutGap(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	letter := func(consumer, reason, seq, subject string, ago time.Duration, status string) {
		rec := events.DynamoDBEventRecord{EventID: "ev-" + seq, EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
			Keys: map[string]events.DynamoDBAttributeValue{"subject": events.NewStringAttribute(subject), "id": events.NewStringAttribute("id-" + seq)}}}
		d, err := deadletter.NewLetter(consumer, reason, rec, errors.New(consumer+": poison record: data.status: unknown status \"archived\""), now.Add(-ago))
		if err != nil {
			t.Fatal(err)
		}
		d.Status = status
		if err := dl.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	letter("projector", deadletter.ReasonPoison, "4100", "messages/550e8400-e29b-41d4-a716-446655440000", time.Hour, deadletter.StatusQuarantined)
	letter("projector", deadletter.ReasonRetriesExhausted, "4000", "github/12345/job/67890", 5*time.Hour, deadletter.StatusReplayed)
	letter("archiver", deadletter.ReasonRetriesExhausted, "4200", "agents/sql-agent/execution/run-9", 20*time.Minute, deadletter.StatusQuarantined)
	letter("projector", deadletter.ReasonPoison, "3000", "messages/old", 9*24*time.Hour, deadletter.StatusQuarantined)
	evNew := schema.Event{Subject: "messages/660e9500-f39c-52e5-b827-557766551111", ID: "ev-conflict", Type: schema.TypeMessageCreated, Time: now.Add(-50 * time.Hour)}
	conflict, err := ingest.ConflictLetter(&ingest.ConflictError{Subject: evNew.Subject, ID: evNew.ID, Stored: evNew, New: evNew, StoredHash: "a", NewHash: "b"}, now.Add(-2*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := dl.Put(ctx, conflict); err != nil {
		t.Fatal(err)
	}
}

// TestOperationsEndToEnd loads the dashboard's operations page
// (#page=ops) in headless Chromium, served by the real API over DynamoDB
// Local holding seeded heartbeats, dead letters, reconcile results and
// gaps, with the API's clock fixed at the test clock: on the first load,
// without any input, every figure equals the API's answer (consumers'
// state, lag, throughput and shards; the last reconcile's totals and rows;
// the gaps of the last 7 days; the dead letters of the last 7 days of every
// consumer with their replay commands), and the expected facts hold
// (the stale archiver, the newer reconcile run, the old gap and letter
// left out). A filtered view (one consumer, quarantined) follows; then a
// screenshot.
func TestOperationsEndToEnd(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	now := testclock.Now().Truncate(time.Second)
	dl := deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters))
	opsSeed(t, c.DynamoDB, dl, n, now)

	qc, err := query.New(c.DynamoDB, n, query.Config{CursorKey: []byte("dashboard-ops-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	view, err := opsview.New(opsview.Config{Records: opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}, DeadLetters: dl, Naming: n})
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Queries: qc, Token: e2eToken, Dashboard: dashboard.Handler(), Logger: quietLogger(),
		Operations: view, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	a := &apiClient{t: t, base: srv.URL, token: e2eToken}
	opsPage := srv.URL + "/#token=" + e2eToken + "&page=ops"

	var ov opsview.Overview
	a.get("operations", nil, &ov)
	var dls opsview.DeadLetterList
	a.get("operations/deadletters", nil, &dls)
	doc := b.dom(t, opsPage)
	ready(t, doc)

	t.Run("page", func(t *testing.T) {
		if doc.byID("ops-section").has("hidden") || !doc.byID("executions-section").has("hidden") || !doc.byID("messages-section").has("hidden") {
			t.Error("want the operations section shown and the data sections hidden")
		}
		checkValue(t, doc, "ops-now", now.UTC().Format(time.RFC3339))
	})

	t.Run("consumers", func(t *testing.T) {
		var keys, states []string
		for _, r := range doc.byTestID("ops-consumer-row") {
			keys = append(keys, r.attrs["data-key"])
			states = append(states, r.attrs["data-state"])
		}
		if want := []string{"projector", "archiver"}; !slices.Equal(keys, want) {
			t.Fatalf("consumer rows %v, want %v", keys, want)
		}
		if want := []string{"ok", "stale"}; !slices.Equal(states, want) {
			t.Errorf("consumer states %v, want %v (the archiver's heartbeat is 2 hours old)", states, want)
		}
		shards := 0
		for _, cs := range ov.Consumers {
			checkValue(t, doc, "ops-lag-"+cs.Consumer, cs.LagSeconds)
			checkValue(t, doc, "ops-rate-"+cs.Consumer, cs.RecordsPerSecond)
			checkValue(t, doc, "ops-age-"+cs.Consumer, *cs.HeartbeatAgeSeconds)
			checkValue(t, doc, "ops-shards-"+cs.Consumer, cs.CurrentShards)
			shards += len(cs.Shards)
		}
		// The API's figures are the seeded ones: lag the largest of the
		// current shards', throughput their sum, the closed shard left out.
		if p := ov.Consumers[0]; p.LagSeconds != 5 || p.RecordsPerSecond != 30 || p.CurrentShards != 2 || *p.HeartbeatAgeSeconds != 30 {
			t.Errorf("projector %+v: want lag 5 s, 30 records/s, 2 current shards, heartbeat 30 s old", p)
		}
		if got := len(doc.byTestID("ops-shard-row")); got != shards || shards != 4 {
			t.Errorf("%d shard rows, API %d, want 4", got, shards)
		}
		if st := doc.one(t, "ops-consumers-state"); st.attrs["data-state"] != "warn" || !strings.Contains(st.textContent(), "archiver") {
			t.Errorf("consumers state %q %q, want a warning naming the archiver", st.attrs["data-state"], st.textContent())
		}
	})

	t.Run("reconcile", func(t *testing.T) {
		r := ov.LastReconcile
		if r == nil || r.Events != 125000 || r.TotalGaps != 4 || r.TotalHealed != 3 || !r.Heal {
			t.Fatalf("last reconcile %+v: want the newer run (125000 events, 4 gaps, 3 healed)", r)
		}
		checkValue(t, doc, "rc-events", r.Events)
		checkValue(t, doc, "rc-gaps", r.TotalGaps)
		checkValue(t, doc, "rc-healed", r.TotalHealed)
		checkValue(t, doc, "rc-finished", r.Finished.Format(time.RFC3339))
		var keys, want []string
		for _, row := range doc.byTestID("rc-row") {
			keys = append(keys, row.attrs["data-key"])
		}
		for _, d := range r.Rows {
			want = append(want, d.Domain+"/"+d.Day)
			for k, v := range map[string]int{"events": d.Events, "missingProjection": d.MissingProjection, "missingArchive": d.MissingArchive,
				"conflicts": d.Conflicts, "healed": d.Healed} {
				checkValue(t, doc, fmt.Sprintf("rc-%s-%s-%s", d.Domain, d.Day, k), v)
			}
		}
		if !slices.Equal(keys, want) || len(keys) != 2 {
			t.Errorf("reconcile rows %v, want %v", keys, want)
		}
	})

	t.Run("gaps", func(t *testing.T) {
		if len(ov.Gaps) != 2 || ov.Gaps[0].Kind != opsrec.GapTrimmed {
			t.Fatalf("API gaps %+v: want the 2 of the last 7 days, newest (trimmed) first", ov.Gaps)
		}
		checkValue(t, doc, "gaps-count", len(ov.Gaps))
		var kinds []string
		for _, r := range doc.byTestID("gap-row") {
			kinds = append(kinds, r.attrs["data-kind"])
		}
		if want := []string{opsrec.GapTrimmed, opsrec.GapLatest}; !slices.Equal(kinds, want) {
			t.Errorf("gap rows %v, want %v", kinds, want)
		}
	})

	t.Run("dead letters", func(t *testing.T) {
		// Every consumer, the last 7 days, newest first: the 9-day-old
		// letter is left out.
		if dls.Total != 4 || !dls.Since.Equal(now.Add(-7*24*time.Hour)) {
			t.Fatalf("API dead letters: total %d since %v, want 4 since 7 days ago", dls.Total, dls.Since)
		}
		checkDeadLetters(t, doc, dls)
		checkValue(t, doc, "dl-count-projector", 1)
		checkValue(t, doc, "dl-count-archiver", 1)
		checkValue(t, doc, "dl-count-ingest", 1)
		if got := doc.byTestID("dl-subject")[0].attrs["data-value"]; got != "agents/sql-agent/execution/run-9" {
			t.Errorf("newest letter's subject %q", got)
		}
	})

	t.Run("filtered", func(t *testing.T) {
		t.Parallel()
		a := a.with(t)
		doc := b.dom(t, opsPage+"&o.consumer=projector&o.status=quarantined")
		ready(t, doc)
		var want opsview.DeadLetterList
		a.get("operations/deadletters", map[string][]string{"consumer": {"projector"}, "status": {"quarantined"}}, &want)
		if want.Total != 1 || !strings.HasPrefix(want.Items[0].Replay, "streamfold deadletter replay --consumer projector --position '") {
			t.Fatalf("API: %+v, want the one quarantined projector letter with its replay command", want)
		}
		checkDeadLetters(t, doc, want)
	})

	t.Run("screenshot", func(t *testing.T) {
		t.Parallel()
		dir, keep := artifactDir(t)
		shot := filepath.Join(dir, "operations.png")
		b.screenshot(t, opsPage, shot)
		keep(shot)
	})
}

// checkDeadLetters compares the page's dead-letter rows with the API's
// list: the rows, their statuses, the total and each replay command (or
// the note of a letter that is not replayed).
func checkDeadLetters(t *testing.T, doc *node, want opsview.DeadLetterList) {
	t.Helper()
	rows := doc.byTestID("dl-row")
	var keys, exp []string
	for _, r := range rows {
		keys = append(keys, r.attrs["data-key"]+" "+r.attrs["data-status"])
	}
	for _, d := range want.Items {
		exp = append(exp, d.Consumer+"/"+d.Position+" "+d.Status)
	}
	if !slices.Equal(keys, exp) {
		t.Fatalf("dead-letter rows %v, want %v", keys, exp)
	}
	checkValue(t, doc, "dl-total", want.Total)
	// Each letter's row is followed by its replay row: the command, or the
	// note of a letter that is not replayed.
	replays := doc.all(func(e *node) bool {
		return e.attrs["data-testid"] == "dl-replay" || e.attrs["data-testid"] == "dl-replay-note"
	})
	if len(replays) != len(want.Items) {
		t.Fatalf("%d replay commands and notes, want one per letter (%d)", len(replays), len(want.Items))
	}
	for i, d := range want.Items {
		id, text := "dl-replay", d.Replay
		if d.Replay == "" {
			id, text = "dl-replay-note", d.ReplayNote
		}
		if got := replays[i]; got.attrs["data-testid"] != id || got.textContent() != text || text == "" {
			t.Errorf("letter %d: %s %q, want %s %q", i, got.attrs["data-testid"], got.textContent(), id, text)
		}
	}
}

// TestOperationsPageStates loads the operations page against the fake API:
// a deployment where nothing ran yet shows its consumers without a
// heartbeat and says that reconcile never ran and that there are no gaps
// and no dead letters; a failing dead-letter route shows the API's error in
// its place while the rest of the page renders.
func TestOperationsPageStates(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	t.Run("nothing yet", func(t *testing.T) {
		t.Parallel()
		srv := newFakeAPI().server(t)
		doc := b.dom(t, srv.URL+"/#token=fake-token&page=ops")
		ready(t, doc)
		var states []string
		for _, r := range doc.byTestID("ops-consumer-row") {
			states = append(states, r.attrs["data-key"]+":"+r.attrs["data-state"])
		}
		if want := []string{"projector:none", "archiver:none"}; !slices.Equal(states, want) {
			t.Errorf("consumer rows %v, want %v", states, want)
		}
		for id, text := range map[string]string{"rc-state": "has not run yet", "gaps-state": "No gaps noticed", "dl-state": "No dead letters since 2031-02-25 20:00:00 UTC"} {
			if st := doc.one(t, id); st.attrs["data-state"] != "empty" || !strings.Contains(st.textContent(), text) {
				t.Errorf("%s = %q %q, want empty with %q", id, st.attrs["data-state"], st.textContent(), text)
			}
		}
		checkValue(t, doc, "ops-now", "2031-03-04T20:00:00Z")
	})
	t.Run("dead letters failing", func(t *testing.T) {
		t.Parallel()
		f := newFakeAPI()
		srv := f.server(t)
		f.setFail("/api/operations/deadletters", fakeError{http.StatusBadRequest, "invalid_parameter", "since: must be RFC3339, e.g. 2026-01-05T00:00:00Z, got \"x\"", "since"})
		doc := b.dom(t, srv.URL+"/#token=fake-token&page=ops&o.since=x")
		ready(t, doc)
		if st := doc.one(t, "dl-state"); st.attrs["data-state"] != "error" || !strings.HasPrefix(st.textContent(), "HTTP 400: since: must be RFC3339") {
			t.Errorf("dl-state = %q %q, want the API's error", st.attrs["data-state"], st.textContent())
		}
		if st := doc.one(t, "rc-state"); st.attrs["data-state"] != "empty" {
			t.Errorf("rc-state = %q: the overview should render despite the dead-letter error", st.attrs["data-state"])
		}
	})
}
