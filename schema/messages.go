package schema

import (
	"encoding/json"
	"strings"
)

// rez_agent message transition event types (seed 004).
const (
	TypeMessageCreated    = "rez.message.created"
	TypeMessageQueued     = "rez.message.queued"
	TypeMessageProcessing = "rez.message.processing"
	TypeMessageCompleted  = "rez.message.completed"
	TypeMessageFailed     = "rez.message.failed"
)

// Stages a message (and a deployment of streamfold) can belong to.
var Stages = []string{"dev", "stage", "prod"}

// NtfyPriorities are the priorities a notification payload may carry.
var NtfyPriorities = []string{"min", "low", "default", "high", "urgent"}

// AggregateMessage is the kind of subject of a message's events
// ("messages/<message_id>").
const AggregateMessage = "message"

func init() {
	newPayload := func() Payload { return new(MessageEvent) }
	registerDomain(Descriptor{
		Domain: DomainMessages,
		Doc:    "rez_agent message transitions (seed 004)",
		Aggregates: []Aggregate{{
			Kind: AggregateMessage, Subject: "messages/<message_id>",
			// created < queued < processing < completed | failed: no
			// backwards transitions; if a message both completes and
			// fails, the later by (time, id) wins.
			Lifecycle: Lifecycle{{"created", 0}, {"queued", 1}, {"processing", 2}, {"completed", 3}, {"failed", 3}},
		}},
		Types: eventTypes(AggregateMessage, newPayload,
			TypeMessageCreated, "created",
			TypeMessageQueued, "queued",
			TypeMessageProcessing, "processing",
			TypeMessageCompleted, "completed",
			TypeMessageFailed, "failed"),
		Tables: []string{TableMessages, TableMetrics},
	})
}

// MessageScopePrefix starts the scope of every per-stage message-count row
// of the metrics table.
const MessageScopePrefix = "messages/"

// MessageScope is the metrics-table scope of a stage's daily message counts
// ("messages/<stage>").
func MessageScope(stage string) string { return MessageScopePrefix + stage }

// MessageEvent is one transition of a rez_agent message. message_id and stage
// are on every transition (so per-stage counts never need a lookup); created
// also carries created_by, message_type, payload and correlation_id; failed
// carries error_message; processing may carry retry_count; completed may carry
// notification_id.
type MessageEvent struct {
	MessageID      string          `json:"message_id"`
	Stage          string          `json:"stage"`
	MessageType    string          `json:"message_type,omitempty"`
	CreatedBy      string          `json:"created_by,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	CorrelationID  string          `json:"correlation_id,omitempty"`
	RetryCount     *int            `json:"retry_count,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
	NotificationID string          `json:"notification_id,omitempty"`
}

// Subject is "messages/<message_id>".
func (p *MessageEvent) Subject() string { return "messages/" + p.MessageID }

// messagePayload is the part of a notification payload that is checked.
type messagePayload struct {
	Text     *string  `json:"text"`
	Priority string   `json:"priority"`
	Tags     []string `json:"tags"`
}

func (p *MessageEvent) validate(c *checker, t string) {
	if c.required("message_id", p.MessageID) && !IsUUID(p.MessageID) {
		c.fail("message_id", "must be a UUID")
	}
	c.oneOf("stage", p.Stage, Stages...)
	if t == TypeMessageCreated {
		c.required("created_by", p.CreatedBy)
		c.required("message_type", p.MessageType)
		if c.required("correlation_id", p.CorrelationID) && !IsUUID(p.CorrelationID) {
			c.fail("correlation_id", "must be a UUID")
		}
		if len(p.Payload) == 0 || string(p.Payload) == "null" {
			c.fail("payload", "is required")
		}
	}
	if p.MessageType != "" {
		c.maxLen("message_type", p.MessageType, 100)
	}
	if len(p.Payload) > 0 && string(p.Payload) != "null" {
		var mp messagePayload
		if err := json.Unmarshal(p.Payload, &mp); err != nil {
			c.fail("payload", "must be a JSON object with text, priority and tags")
		} else if p.MessageType == "scheduled_hello" || p.MessageType == "manual_notification" {
			if mp.Text == nil || strings.TrimSpace(*mp.Text) == "" {
				c.fail("payload.text", "is required for "+p.MessageType)
			}
			if mp.Priority != "" {
				c.oneOf("payload.priority", mp.Priority, NtfyPriorities...)
			}
		}
	}
	if t == TypeMessageFailed {
		c.required("error_message", p.ErrorMessage)
	}
	if p.RetryCount != nil && (*p.RetryCount < 0 || *p.RetryCount > 100) {
		c.fail("retry_count", "must be between 0 and 100")
	}
}
