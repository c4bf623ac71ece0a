package archiver

import (
	"strings"

	"github.com/streamfold/streamfold/schema"
)

// TableMessages holds schema.DomainMessages: rez.message.*.
const TableMessages = "messages"

type msgP = *schema.MessageEvent

// messageCols are the typed columns, in file order: add a column only at the
// end (see newTableDef).
var messageCols = []colDef{
	payloadCol("message_id", TypeString, "message id (UUID)", false, func(p msgP) any { return optStr(p.MessageID) }),
	payloadCol("stage", TypeString, "dev, stage or prod", true, func(p msgP) any { return optStr(p.Stage) }),
	payloadCol("message_type", TypeString, "message type (created)", true, func(p msgP) any { return optStr(p.MessageType) }),
	anyCol("status", TypeString, "status the event moves the message to: "+strings.Join(schema.Statuses(schema.AggregateMessage), ", "), true, func(s *source) any {
		status, ok := schema.StatusOf(s.rec.Event.Type)
		if !ok {
			return nil
		}
		return status
	}),
	payloadCol("created_by", TypeString, "creator (created)", true, func(p msgP) any { return optStr(p.CreatedBy) }),
	payloadCol("correlation_id", TypeString, "tracing correlation id (created)", false, func(p msgP) any { return optStr(p.CorrelationID) }),
	payloadCol("retry_count", TypeInt, "retry count (processing)", false, func(p msgP) any { return optInt(p.RetryCount) }),
	payloadCol("error_message", TypeString, "failure reason (failed)", false, func(p msgP) any { return optStr(p.ErrorMessage) }),
	payloadCol("notification_id", TypeString, "ntfy notification id (completed)", false, func(p msgP) any { return optStr(p.NotificationID) }),
}

func init() {
	registerTable(newTableDef(schema.DomainMessages, TableMessages, "rez_agent message transitions (rez.message.*), one row per event.", messageCols))
}
