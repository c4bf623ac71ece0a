package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/schema"
)

// The route tests send the same kind of event through every ingest route
// (POST /events structured and batched, POST /eventbridge, emit's NDJSON
// and, where the event can be a GitHub delivery, the webhook) into one
// Appender, and check a rule that must hold on all of them.

// agentAt is the time of the routes' agent events.
var agentAt = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// agentInput and agentCause are an agent's prompt and failure text: what
// the privacy policy must keep out of the event table.
const (
	agentInput = `{"prompt":"the secret plan for <Q3> & beyond","sessionId":"s-1"}`
	agentCause = `{"errorMessage":"model leaked the secret plan","errorType":"Leak"}`
)

// agentDetail is the EventBridge detail (and the envelope's data) of a
// failed agent execution; variant changes its content.
func agentDetail(t *testing.T, variant string) json.RawMessage {
	t.Helper()
	arn := "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"
	d := map[string]any{
		"executionArn":     "arn:aws:states:us-west-2:123:execution:my-agent-prod:run-1",
		"stateMachineArn":  arn,
		"name":             "run-1",
		"status":           schema.ExecutionFailed,
		"startDate":        agentAt.Add(-time.Minute).UnixMilli(),
		"stopDate":         agentAt.UnixMilli(),
		"input":            agentInput,
		"output":           nil,
		"error":            "States.TaskFailed" + variant,
		"cause":            agentCause,
		"redriveCount":     0,
		"redriveStatus":    "REDRIVABLE",
		"stateMachineTags": map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent", "Environment": "prod"},
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// agentEnvelope is the agent event as a CloudEvent / NDJSON envelope.
func agentEnvelope(t *testing.T, id, variant string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"specversion": "1.0", "id": id, "source": SourceStepFunctions, "type": schema.TypeExecutionStatusChange,
		"time": agentAt.Format(time.RFC3339), "data": agentDetail(t, variant),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer is what a route said about one event, as an HTTP status (emit's
// outcomes are mapped to the statuses the HTTP routes give them).
type answer struct {
	code int
	body string
}

// ingestRoute sends one event, of id and content variant, through a route.
type ingestRoute struct {
	name string
	send func(t *testing.T, h http.Handler, app *Appender, id, variant string) answer
}

func httpAnswer(rec *httptest.ResponseRecorder) answer {
	return answer{code: rec.Code, body: rec.Body.String()}
}

// agentRoutes are the routes an agent event takes.
var agentRoutes = []ingestRoute{
	{"events structured", func(t *testing.T, h http.Handler, _ *Appender, id, variant string) answer {
		return httpAnswer(post(h, PathEvents, ctStructured, agentEnvelope(t, id, variant)))
	}},
	{"events batch", func(t *testing.T, h http.Handler, _ *Appender, id, variant string) answer {
		rec := post(h, PathEvents, ctBatch, []byte("["+string(agentEnvelope(t, id, variant))+"]"))
		var b BatchResult
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || len(b.Results) != 1 {
			t.Fatalf("batch answer %d: %s", rec.Code, rec.Body)
		}
		// The batch's one result stands for the event.
		return answer{code: statusCode(b.Results[0].Status), body: rec.Body.String()}
	}},
	{"eventbridge", func(t *testing.T, h http.Handler, _ *Appender, id, variant string) answer {
		ev := EventBridgeEvent{Version: "0", ID: id, DetailType: DetailTypeExecutionStatusChange, Source: SourceStepFunctions,
			Account: "123", Time: agentAt, Region: "us-west-2", Detail: agentDetail(t, variant)}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return httpAnswer(post(h, PathEventBridge, nil, b))
	}},
	{"emit", func(t *testing.T, _ http.Handler, app *Appender, id, variant string) answer {
		sum, err := Emit(context.Background(), bytes.NewReader(agentEnvelope(t, id, variant)), app, EmitConfig{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(sum)
		switch {
		case sum.Accepted == 1:
			return answer{http.StatusAccepted, string(b)}
		case sum.Duplicates == 1:
			return answer{http.StatusOK, string(b)}
		case len(sum.Conflicts) == 1:
			return answer{http.StatusConflict, string(b)}
		case len(sum.Rejected) == 1:
			return answer{http.StatusBadRequest, string(b)}
		}
		return answer{http.StatusServiceUnavailable, string(b)}
	}},
}

// webhookRoute sends the workflow_job fixture as a signed delivery (its id
// is the delivery's; variant is not used).
var webhookRoute = ingestRoute{"webhook", func(t *testing.T, h http.Handler, _ *Appender, id, _ string) answer {
	body := readTestdata(t, "github/workflow_job_queued.json")
	r := webhookRequest("workflow_job", id, body)
	r.URL.Path = PathGitHubWebhook
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return httpAnswer(rec)
}}

// webhookEventTime is the time of webhookRoute's event.
func webhookEventTime(t *testing.T) time.Time {
	t.Helper()
	e, err := FromGitHubDelivery(GitHubDelivery{Headers: map[string]string{"X-GitHub-Event": "workflow_job", "X-GitHub-Delivery": "d"},
		Body: readTestdata(t, "github/workflow_job_queued.json")}, agentAt)
	if err != nil {
		t.Fatal(err)
	}
	return e.Time
}

// memLetters keeps dead letters in memory.
type memLetters struct {
	mu  sync.Mutex
	got []deadletter.Letter
}

func (m *memLetters) Put(_ context.Context, d deadletter.Letter) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.got {
		if x.Consumer == d.Consumer && x.Position == d.Position {
			m.got[i] = d
			return nil
		}
	}
	m.got = append(m.got, d)
	return nil
}

func (m *memLetters) letters() []deadletter.Letter {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]deadletter.Letter(nil), m.got...)
}

// routeHandler is the ingest handler over app, with the test secrets.
func routeHandler(t *testing.T, app *Appender) *HTTPHandler {
	t.Helper()
	h, err := NewHTTPHandler(HTTPConfig{
		Appender: app, WebhookSecret: StaticSecret(testSecret), Token: StaticSecret(testToken),
		Webhook: WebhookConfig{Now: func() time.Time { return agentAt }}, DetailTags: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestFutureTimeOnEveryRoute: an event dated 25 h after the moment it is
// appended is rejected on every route, naming "time" and the 24 h limit; one
// 23 h ahead is accepted. A configured skew moves the limit.
func TestFutureTimeOnEveryRoute(t *testing.T) {
	routes := append(append([]ingestRoute(nil), agentRoutes...), webhookRoute)
	for _, r := range routes {
		at := agentAt
		if r.name == "webhook" {
			at = webhookEventTime(t)
		}
		for _, tt := range []struct {
			ahead, skew time.Duration
			want        int
		}{
			{25 * time.Hour, 0, http.StatusBadRequest},
			{23 * time.Hour, 0, http.StatusAccepted},
			{25 * time.Hour, 26 * time.Hour, http.StatusAccepted},
			{2 * time.Hour, time.Hour, http.StatusBadRequest},
		} {
			t.Run(fmt.Sprintf("%s/%s ahead, skew %s", r.name, tt.ahead, tt.skew), func(t *testing.T) {
				put := &memPut{}
				app, err := NewAppender(put, AppenderConfig{Table: "events", MaxAttempts: 1, MaxFutureSkew: tt.skew,
					Now: func() time.Time { return at.Add(-tt.ahead) }})
				if err != nil {
					t.Fatal(err)
				}
				got := r.send(t, routeHandler(t, app), app, "e-1", "")
				if got.code != tt.want {
					t.Fatalf("answer %d, want %d: %s", got.code, tt.want, got.body)
				}
				if tt.want == http.StatusAccepted {
					return
				}
				limit := cmpOr(tt.skew, DefaultMaxFutureSkew)
				for _, s := range []string{"time", "ahead of recordedat", "at most " + limit.String() + " ahead"} {
					if !strings.Contains(got.body, s) {
						t.Errorf("answer does not say %q: %s", s, got.body)
					}
				}
				if n := len(put.stored(t)); n != 0 {
					t.Errorf("%d events stored", n)
				}
			})
		}
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// TestTimeAheadError: the rejection is a *TimeAheadError matching
// ErrTimeAhead, a *schema.ValidationError naming "time", and permanent.
func TestTimeAheadError(t *testing.T) {
	app, err := NewAppender(&memPut{}, AppenderConfig{Table: "events", Now: func() time.Time { return agentAt.Add(-25 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	var e schema.Event
	if err := json.Unmarshal(agentEnvelope(t, "e-1", ""), &e); err != nil {
		t.Fatal(err)
	}
	res, _ := app.Append(context.Background(), []schema.Event{e})
	err = res.Errors[0]
	var ta *TimeAheadError
	var ve *schema.ValidationError
	if res.Outcomes[0] != Rejected || !errors.As(err, &ta) || !errors.As(err, &ve) || !isPermanent(err) || DeadLetterReason(err) != ReasonTimeAhead {
		t.Fatalf("outcome %v, error %T %v", res.Outcomes[0], err, err)
	}
	const want = "time: is 25h0m0s ahead of recordedat 2026-03-09T11:00:00Z; at most 24h0m0s ahead is accepted (max future skew)"
	if err.Error() != want || ta.Limit != DefaultMaxFutureSkew || len(ve.Errors) != 1 || ve.Errors[0].Field != "time" {
		t.Fatalf("error %q\nwant  %q", err, want)
	}
}

// privacyCheck fails when a stored agent event holds its input or cause
// verbatim (as text or as JSON-escaped text) anywhere in its item.
func privacyCheck(t *testing.T, what string, item []byte) {
	t.Helper()
	for _, secret := range []string{agentInput, agentCause} {
		esc, _ := json.Marshal(secret)
		for _, form := range []string{secret, string(esc[1 : len(esc)-1]), "secret plan"} {
			if bytes.Contains(item, []byte(form)) {
				t.Errorf("%s stores an agent payload verbatim (%q): %s", what, form, item)
			}
		}
	}
}

// TestPrivacyPolicyOnEveryRoute: the same agent event sent through every
// route is stored with its input and cause hashed (the default policy),
// never verbatim; with PayloadsKeep they are kept on every route.
func TestPrivacyPolicyOnEveryRoute(t *testing.T) {
	for _, r := range agentRoutes {
		t.Run(r.name, func(t *testing.T) {
			put := &memPut{}
			app, err := NewAppender(put, AppenderConfig{Table: "events", MaxAttempts: 1, Now: func() time.Time { return agentAt }})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.send(t, routeHandler(t, app), app, "e-"+r.name, ""); got.code != http.StatusAccepted {
				t.Fatalf("answer %d: %s", got.code, got.body)
			}
			stored := put.stored(t)
			if len(stored) != 1 {
				t.Fatalf("%d events stored", len(stored))
			}
			privacyCheck(t, r.name, stored[0].Data)
			var d map[string]json.RawMessage
			if err := json.Unmarshal(stored[0].Data, &d); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(d["input"]), `"sha256:`) || !strings.HasPrefix(string(d["cause"]), `"sha256:`) {
				t.Fatalf("input %s, cause %s: want hashes", d["input"], d["cause"])
			}
		})
		t.Run(r.name+"/keep", func(t *testing.T) {
			put := &memPut{}
			app, err := NewAppender(put, AppenderConfig{Table: "events", MaxAttempts: 1, Now: func() time.Time { return agentAt }, Payloads: PayloadsKeep})
			if err != nil {
				t.Fatal(err)
			}
			h, err := NewHTTPHandler(HTTPConfig{Appender: app, Token: StaticSecret(testToken), DetailTags: true, StepFunctionsPayloads: PayloadsKeep})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.send(t, h, app, "e-keep", ""); got.code != http.StatusAccepted {
				t.Fatalf("answer %d: %s", got.code, got.body)
			}
			// emit's adapter policy is its own (EmitConfig); the envelope
			// line does not go through it.
			if stored := put.stored(t); len(stored) != 1 || !bytes.Contains(stored[0].Data, []byte("secret plan")) {
				t.Fatalf("stored %s: want the payloads kept", stored)
			}
		})
	}
}

// TestConflictOnEveryRoute: the same id with the same content is a
// duplicate (200) on every route; with different content it is a conflict
// (409, emit: "conflicts"), nothing is written, and the dead letters keep
// both versions (consumer ingest, reason conflict), once per version.
func TestConflictOnEveryRoute(t *testing.T) {
	for _, r := range agentRoutes {
		t.Run(r.name, func(t *testing.T) {
			put, dl := &memPut{}, &memLetters{}
			app, err := NewAppender(put, AppenderConfig{Table: "events", MaxAttempts: 1, Now: func() time.Time { return agentAt }, DeadLetters: dl})
			if err != nil {
				t.Fatal(err)
			}
			h := routeHandler(t, app)
			for i, step := range []struct {
				variant string
				want    int
			}{
				{"", http.StatusAccepted},
				{"", http.StatusOK},
				{"-other", http.StatusConflict},
				{"-other", http.StatusConflict}, // the producer retries: one letter still
				{"", http.StatusOK},
			} {
				if got := r.send(t, h, app, "e-1", step.variant); got.code != step.want {
					t.Fatalf("step %d: answer %d, want %d: %s", i, got.code, step.want, got.body)
				} else if step.want == http.StatusConflict && !strings.Contains(got.body, "conflict") {
					t.Fatalf("step %d: answer does not say conflict: %s", i, got.body)
				}
			}
			stored := put.stored(t)
			if len(stored) != 1 || bytes.Contains(stored[0].Data, []byte("-other")) {
				t.Fatalf("stored %d events: %s", len(stored), stored)
			}
			letters := dl.letters()
			if len(letters) != 1 {
				t.Fatalf("%d dead letters, want 1: %+v", len(letters), letters)
			}
			checkConflictLetter(t, letters[0], stored[0])
		})
	}
}

// checkConflictLetter checks a conflict's dead letter against the stored
// event: consumer, reason, and both versions in its record.
func checkConflictLetter(t *testing.T, d deadletter.Letter, stored schema.Event) {
	t.Helper()
	if d.Consumer != DeadLetterConsumer || d.Reason != ReasonConflict || d.Status != deadletter.StatusQuarantined || d.EventID != stored.ID {
		t.Fatalf("dead letter %+v", d)
	}
	rec, err := ParseConflictDeadLetter(d.Record)
	if err != nil {
		t.Fatal(err)
	}
	storedHash, _ := schema.ContentHash(stored)
	if rec.Stored.ID != stored.ID || !bytes.Equal(rec.Stored.Data, stored.Data) || rec.StoredContentHash != storedHash {
		t.Fatalf("record's stored version %+v (%s), want %+v (%s)", rec.Stored, rec.StoredContentHash, stored, storedHash)
	}
	newHash, _ := schema.ContentHash(rec.New)
	if !bytes.Contains(rec.New.Data, []byte("-other")) || rec.NewContentHash != newHash || newHash == storedHash {
		t.Fatalf("record's new version %s (%s)", rec.New.Data, rec.NewContentHash)
	}
	if !strings.HasSuffix(d.Position, "#"+stored.ID+"#"+newHash) {
		t.Fatalf("position %q", d.Position)
	}
}
