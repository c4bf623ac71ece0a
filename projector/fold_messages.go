package projector

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func init() { registerFold(KindMessage, func() Aggregate { return &MessageState{} }) }

// Message statuses (seed 004, declared in schema): created < queued <
// processing < completed | failed.
var messageStatuses = precedenceOf(KindMessage)

// messageLifecycle is the messages' lifecycle as schema declares it.
var messageLifecycle = lifecycleOf(KindMessage)

// messageStatusList is every status, in precedence order (the counters of a
// message metrics row).
var messageStatusList = messageLifecycle.Names()

// MessageState is the fold of one rez_agent message (messages/<id>): the
// seed 004 messages item and its share of the per-stage daily counts.
type MessageState struct {
	MessageID      string               `json:"messageId,omitempty"`
	Stage          string               `json:"stage,omitempty"`
	Status         LWW[string]          `json:"status,omitzero"`
	CreatedBy      LWW[string]          `json:"createdBy,omitzero"`
	MessageType    LWW[string]          `json:"messageType,omitzero"`
	Payload        LWW[json.RawMessage] `json:"payload,omitzero"`
	CorrelationID  LWW[string]          `json:"correlationId,omitzero"`
	ErrorMessage   LWW[string]          `json:"errorMessage,omitzero"`
	NotificationID LWW[string]          `json:"notificationId,omitzero"`
	RetryCount     *int                 `json:"retryCount,omitempty"` // max
	// CreatedAt is the earliest created event's time, ProcessingStartedAt
	// the earliest processing event's, FirstAt the earliest event's;
	// UpdatedAt is the latest recordedat.
	CreatedAt           time.Time `json:"createdAt,omitzero"`
	ProcessingStartedAt time.Time `json:"processingStartedAt,omitzero"`
	FirstAt             time.Time `json:"firstAt,omitzero"`
	UpdatedAt           time.Time `json:"updatedAt,omitzero"`
}

// Apply folds rez.message.* events.
func (m *MessageState) Apply(e schema.Event, p schema.Payload) {
	d, ok := payloadOf(e, p).(*schema.MessageEvent)
	if !ok {
		return
	}
	s := StampOf(e)
	keepLeast(&m.MessageID, d.MessageID)
	keepLeast(&m.Stage, d.Stage)
	messageStatuses.Offer(&m.Status, statusOf(e), s)
	setStr(&m.CreatedBy, s, d.CreatedBy)
	setStr(&m.MessageType, s, d.MessageType)
	setStr(&m.CorrelationID, s, d.CorrelationID)
	setStr(&m.ErrorMessage, s, d.ErrorMessage)
	setStr(&m.NotificationID, s, d.NotificationID)
	if len(d.Payload) > 0 && string(d.Payload) != "null" {
		var b bytes.Buffer
		if json.Compact(&b, d.Payload) == nil {
			m.Payload.Set(s, json.RawMessage(b.Bytes()))
		}
	}
	if d.RetryCount != nil && (m.RetryCount == nil || *d.RetryCount > *m.RetryCount) {
		n := *d.RetryCount
		m.RetryCount = &n
	}
	switch e.Type {
	case schema.TypeMessageCreated:
		keepEarliest(&m.CreatedAt, e.Time)
	case schema.TypeMessageProcessing:
		keepEarliest(&m.ProcessingStartedAt, e.Time)
	}
	keepEarliest(&m.FirstAt, e.Time)
	keepLatest(&m.UpdatedAt, recordedTime(e))
}

// createdDate is the created event's time, or the earliest event's until it
// is known (created_date is the sort key of every messages GSI).
func (m *MessageState) createdDate() time.Time {
	if !m.CreatedAt.IsZero() {
		return m.CreatedAt
	}
	return m.FirstAt
}

// terminal reports whether the message reached a final status (completed
// or failed: the lifecycle's highest rank).
func (m *MessageState) terminal() bool {
	return m.Status.Known() && messageLifecycle.Terminal(m.Status.V)
}

// Items returns the seed 004 messages item. payload is the JSON object as a
// DynamoDB map; processing_completed_at is the time of the terminal event
// whose status won; error_message is kept only while the status is failed.
func (m *MessageState) Items() []Item {
	if m.MessageID == "" {
		return nil
	}
	created := m.createdDate()
	it := schema.MessageItem{
		MessageID:      m.MessageID,
		CreatedDate:    timeAttr(created),
		CreatedBy:      lwwStr(m.CreatedBy),
		Stage:          m.Stage,
		MessageType:    lwwStr(m.MessageType),
		Status:         lwwStr(m.Status),
		UpdatedDate:    timeAttr(m.UpdatedAt),
		NotificationID: lwwStr(m.NotificationID),
		CorrelationID:  lwwStr(m.CorrelationID),

		ProcessingStartedAt: timeAttr(m.ProcessingStartedAt),
	}
	if m.Payload.Known() {
		if av, err := jsonToAV(m.Payload.V); err == nil {
			it.Payload = &schema.RawValue{AttributeValue: av}
		}
	}
	if m.terminal() {
		it.ProcessingCompletedAt = timeAttr(m.Status.Time)
	}
	if m.Status.V == "failed" {
		it.ErrorMessage = lwwStr(m.ErrorMessage)
	}
	if m.RetryCount != nil {
		it.RetryCount = ptr(int64(*m.RetryCount))
	}
	// ttl counts from the latest recordedat (retention, docs/projector.md).
	anchor := m.UpdatedAt
	if anchor.IsZero() {
		anchor = created
	}
	if !anchor.IsZero() {
		it.TTL = ttlOf(schema.TableMessages, anchor)
	}
	return []Item{itemOf(schema.TableMessages, it)}
}

// jsonToAV converts JSON text to an attribute value: objects become maps,
// arrays lists, and numbers keep their exact text (json.Number becomes N).
func jsonToAV(raw json.RawMessage) (types.AttributeValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return attributevalue.Marshal(v)
}

// Contributions returns the message's share of its stage's daily counts in
// the metrics table (scope "messages/<stage>", date of created_date): total
// and one counter per status, 1 for the message's current status.
func (m *MessageState) Contributions() []Contribution {
	created := m.createdDate()
	if m.Stage == "" || created.IsZero() || !m.Status.Known() {
		return nil
	}
	scope, date := schema.MessageScope(m.Stage), dayOf(created)
	c := make(map[string]int64, len(messageStatusList)+1)
	c["total"] = 1
	for _, st := range messageStatusList {
		c[st] = 0
	}
	c[m.Status.V] = 1
	return []Contribution{{
		Table:    schema.TableMetrics,
		Key:      map[string]types.AttributeValue{"scope": avS(scope), "date": avS(date)},
		Attrs:    map[string]types.AttributeValue{"scope": avS(scope), "date": avS(date)},
		Counters: c,
	}}
}
