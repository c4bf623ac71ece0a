package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opsview"
	"github.com/streamfold/streamfold/schema"
)

// opsRecords serves fixed operations records and remembers the window of
// the gaps asked for.
type opsRecords struct {
	gapsSince time.Time
	fail      error
}

func (o *opsRecords) Progresses(context.Context) ([]opsrec.Progress, error) {
	return []opsrec.Progress{{Consumer: "projector", Shard: "shard-1", Updated: fixedNow.Add(-time.Hour), Lag: 3 * time.Second,
		Records: 120, Since: fixedNow.Add(-time.Hour - time.Minute)}}, o.fail
}

func (o *opsRecords) LastResult(context.Context) (opsrec.Result, bool, error) {
	return opsrec.Result{Finished: fixedNow.Add(-2 * time.Hour), From: fixedNow.Add(-26 * time.Hour), To: fixedNow.Add(-2 * time.Hour),
		Rows: []opsrec.DayGaps{{Domain: "messages", Day: "2030-01-14", MissingArchive: 2}}}, true, nil
}

func (o *opsRecords) Gaps(_ context.Context, since time.Time) ([]opsrec.Gap, error) {
	o.gapsSince = since
	return []opsrec.Gap{{Consumer: "archiver", Kind: opsrec.GapTrimmed, Noticed: fixedNow.Add(-time.Hour)}}, nil
}

// opsLetters serves one dead letter of the projector and remembers the
// consumers read (concurrently).
type opsLetters struct {
	mu        sync.Mutex
	consumers []string
}

func (o *opsLetters) read() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := slices.Clone(o.consumers)
	slices.Sort(l)
	o.consumers = nil
	return strings.Join(l, ",")
}

func (o *opsLetters) List(_ context.Context, consumer string) ([]deadletter.Letter, error) {
	o.mu.Lock()
	o.consumers = append(o.consumers, consumer)
	o.mu.Unlock()
	if consumer != "projector" {
		return nil, nil
	}
	rec := events.DynamoDBEventRecord{EventID: "e1", Change: events.DynamoDBStreamRecord{SequenceNumber: "42",
		Keys: map[string]events.DynamoDBAttributeValue{"subject": events.NewStringAttribute("messages/m-1")}}}
	d, err := deadletter.NewLetter("projector", deadletter.ReasonPoison, rec, errors.New("bad"), fixedNow.Add(-3*24*time.Hour))
	return []deadletter.Letter{d}, err
}

func opsHandler(t *testing.T, rec *opsRecords, dl *opsLetters) http.Handler {
	t.Helper()
	v, err := opsview.New(opsview.Config{Records: rec, DeadLetters: dl, Naming: schema.Naming{Prefix: "unit", Stage: "dev"}, MaxLimit: 200})
	if err != nil {
		t.Fatal(err)
	}
	return newHandler(t, &fakeDB{}, func(c *Config) { c.Operations = v })
}

func TestOperations(t *testing.T) {
	rec, dl := &opsRecords{}, &opsLetters{}
	h := opsHandler(t, rec, dl)
	bearer := "Bearer " + token

	r := do(t, h, http.MethodGet, "/api/operations", bearer)
	if r.status != http.StatusOK {
		t.Fatalf("GET /api/operations: %d %s", r.status, r.raw)
	}
	// Ages and windows are on the API's clock.
	if !rec.gapsSince.Equal(fixedNow.Add(-7*24*time.Hour)) || r.body["now"] != "2030-01-15T20:00:00Z" {
		t.Errorf("gaps since %v, now %v: want the API's clock", rec.gapsSince, r.body["now"])
	}
	cons, _ := r.body["consumers"].([]any)
	if len(cons) != 2 {
		t.Fatalf("consumers %v, want projector and archiver", r.body["consumers"])
	}
	p := cons[0].(map[string]any)
	if p["consumer"] != "projector" || p["state"] != "stale" || p["heartbeatAgeSeconds"] != 3600.0 || p["lagSeconds"] != 3.0 || p["recordsPerSecond"] != 2.0 {
		t.Errorf("projector %v: want stale (1 h), lag 3 s, 2 records/s", p)
	}
	last, _ := r.body["lastReconcile"].(map[string]any)
	if last == nil || last["totalGaps"] != 2.0 || last["ageSeconds"] != 7200.0 {
		t.Errorf("lastReconcile %v", r.body["lastReconcile"])
	}
	if gaps, _ := r.body["gaps"].([]any); len(gaps) != 1 {
		t.Errorf("gaps %v", r.body["gaps"])
	}

	r = do(t, h, http.MethodGet, "/api/operations/deadletters", bearer)
	items, _ := r.body["items"].([]any)
	if r.status != http.StatusOK || len(items) != 1 || r.body["since"] != "2030-01-08T20:00:00Z" {
		t.Fatalf("GET /api/operations/deadletters: %d %s", r.status, r.raw)
	}
	if got := dl.read(); got != "archiver,ingest,projector" {
		t.Errorf("consumers read %s, want archiver, ingest and projector", got)
	}
	it := items[0].(map[string]any)
	if it["subject"] != "messages/m-1" || it["reason"] != "poison" || !strings.HasPrefix(it["replay"].(string), "streamfold deadletter replay --consumer projector --position ") {
		t.Errorf("dead letter %v", it)
	}
	r = do(t, h, http.MethodGet, "/api/operations/deadletters?consumer=archiver&status=quarantined&since=2030-01-01T00:00:00Z&limit=5", bearer)
	if read := dl.read(); r.status != http.StatusOK || r.body["consumer"] != "archiver" || read != "archiver" {
		t.Errorf("filtered by consumer: %d %s (read %v)", r.status, r.raw, read)
	}

	for _, tc := range []struct {
		target, auth     string
		status           int
		code, param, msg string
	}{
		{"/api/operations", "", http.StatusUnauthorized, CodeUnauthorized, "", ""},
		{"/api/operations/deadletters", "Bearer wrong-token-0123456789", http.StatusUnauthorized, CodeUnauthorized, "", ""},
		{"/api/operations?x=1", bearer, http.StatusBadRequest, CodeInvalidParameter, "x", ""},
		{"/api/operations/deadletters?since=yesterday", bearer, http.StatusBadRequest, CodeInvalidParameter, "since", "must be RFC3339"},
		{"/api/operations/deadletters?since=2031-01-01T00:00:00Z", bearer, http.StatusBadRequest, CodeInvalidParameter, "since", "must not be after now"},
		{"/api/operations/deadletters?limit=0", bearer, http.StatusBadRequest, CodeInvalidParameter, "limit", "positive integer"},
		{"/api/operations/deadletters?limit=201", bearer, http.StatusBadRequest, CodeInvalidParameter, "limit", "between 1 and 200"},
		{"/api/operations/deadletters?status=lost", bearer, http.StatusBadRequest, CodeInvalidParameter, "status", "quarantined, replayed or all"},
		{"/api/operations/nothing", bearer, http.StatusNotFound, CodeNotFound, "", ""},
	} {
		r := do(t, h, http.MethodGet, tc.target, tc.auth)
		e, _ := r.body["error"].(map[string]any)
		if r.status != tc.status || r.errorCode() != tc.code || (tc.param != "" && e["param"] != tc.param) || !strings.Contains(r.raw, tc.msg) {
			t.Errorf("GET %s: %d %s, want %d %s param %q with %q", tc.target, r.status, r.raw, tc.status, tc.code, tc.param, tc.msg)
		}
	}
	if r := do(t, h, http.MethodPost, "/api/operations", bearer); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/operations: %d", r.status)
	}
	rec.fail = errors.New("secret detail")
	if r := do(t, h, http.MethodGet, "/api/operations", bearer); r.status != http.StatusInternalServerError || strings.Contains(r.raw, "secret detail") {
		t.Errorf("a failing read: %d %s, want 500 without the detail", r.status, r.raw)
	}
}

func TestOperationsNotConfigured(t *testing.T) {
	h := newHandler(t, &fakeDB{}, nil)
	for _, p := range []string{"/api/operations", "/api/operations/deadletters"} {
		if r := do(t, h, http.MethodGet, p, "Bearer "+token); r.status != http.StatusNotFound || !strings.Contains(r.raw, "Config.Operations") {
			t.Errorf("GET %s without Operations: %d %s", p, r.status, r.raw)
		}
		if r := do(t, h, http.MethodGet, p, ""); r.status != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401 before anything else", p, r.status)
		}
	}
}
