package simulate

import (
	"encoding/json"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// rez_agent messages (seed 004): created, queued (optional), processing,
// then completed or failed. A retry is another processing event with a
// higher retry_count; states never move backwards.

var messageUsers = []string{"user:alice@example.com", "user:bob@example.com", "user:ops-oncall@example.com"}

var manualTexts = []struct{ title, text string }{
	{"Deploy finished", "api v2.14.0 is live in prod"},
	{"Reminder", "Standup moved to 10:30 today"},
	{"Disk usage", "db-replica-2 volume is at 85%"},
	{"Backup", "Nightly snapshot completed in 14m"},
	{"Heads up", "Certificate for status.example.com expires in 7 days"},
}

var ntfyErrors = []string{
	"ntfy.sh returned 503 Service Unavailable",
	"ntfy.sh returned 429 Too Many Requests",
	"POST https://ntfy.sh/rez-agent: context deadline exceeded",
	"invalid topic: rez-agent-ops",
}

type notification struct {
	Title    string   `json:"title,omitempty"`
	Text     string   `json:"text"`
	Priority string   `json:"priority"`
	Tags     []string `json:"tags"`
	ClickURL string   `json:"click_url,omitempty"`
}

func (g *gen) message(at time.Time) {
	stage := schema.Stages[g.weighted([]int{30, 20, 50})]
	source := "rez_agent/" + stage
	id := g.uuid()
	subject := "messages/" + id
	t := msec(at)
	add := func(typ string, p schema.MessageEvent) {
		p.MessageID, p.Stage = id, stage
		g.add(g.event(g.uuid(), source, typ, subject, t, &p), t, g.between(5*time.Millisecond, 80*time.Millisecond), 0)
	}
	advance := func(lo, hi time.Duration) { t = msec(t.Add(g.between(lo, hi))) }

	created := schema.MessageEvent{CorrelationID: g.uuid()}
	var n notification
	if g.chance(600) {
		created.MessageType, created.CreatedBy = "scheduled_hello", "scheduler"
		n = notification{Text: "hello world", Priority: "default", Tags: []string{"scheduled", "daily"}}
	} else {
		m := manualTexts[g.r.IntN(len(manualTexts))]
		created.MessageType, created.CreatedBy = "manual_notification", messageUsers[g.r.IntN(len(messageUsers))]
		n = notification{Title: m.title, Text: m.text, Priority: schema.NtfyPriorities[1+g.r.IntN(4)], Tags: []string{"manual"}}
		if n.Priority == "urgent" || n.Priority == "high" {
			n.Tags = append(n.Tags, "warning")
		}
		if g.chance(300) {
			n.ClickURL = "https://status.example.com"
		}
	}
	payload, err := json.Marshal(n)
	if err != nil && g.err == nil {
		g.err = err
	}
	created.Payload = payload
	add(schema.TypeMessageCreated, created)

	// Manual messages sent through the web API are often processed directly,
	// without the optional queued state.
	if created.MessageType == "scheduled_hello" || g.chance(600) {
		advance(20*time.Millisecond, 300*time.Millisecond)
		add(schema.TypeMessageQueued, schema.MessageEvent{})
	}
	advance(50*time.Millisecond, 2*time.Second)
	add(schema.TypeMessageProcessing, schema.MessageEvent{RetryCount: ptr(0)})

	retries := 0
	switch r := g.r.IntN(1000); {
	case r < 60:
		retries = 1
	case r < 85:
		retries = 2
	case r < 95:
		retries = 3
	}
	for i := 1; i <= retries; i++ {
		advance(time.Duration(i)*2*time.Second, time.Duration(i)*10*time.Second) // backoff
		add(schema.TypeMessageProcessing, schema.MessageEvent{RetryCount: ptr(i)})
	}
	advance(200*time.Millisecond, 1500*time.Millisecond)
	failed := g.chance(30) || (retries == 3 && g.chance(500)) || (retries > 0 && g.chance(150))
	if failed {
		add(schema.TypeMessageFailed, schema.MessageEvent{ErrorMessage: ntfyErrors[g.r.IntN(len(ntfyErrors))], RetryCount: ptr(retries)})
		return
	}
	add(schema.TypeMessageCompleted, schema.MessageEvent{NotificationID: "ntfy_" + g.alnum(12), RetryCount: ptr(retries)})
}
