package schema

// MessageItem is a rez_agent message of the messages table (seed 004), as
// the message fold writes it.
type MessageItem struct {
	// MessageID is the table's key.
	MessageID string `dynamodbav:"message_id,omitempty" json:"message_id,omitempty"`
	// CreatedDate is the created event's time, or the earliest event's
	// until that is known: the sort key of every GSI.
	CreatedDate string `dynamodbav:"created_date,omitempty" json:"created_date,omitempty"`
	// CreatedBy, MessageType, NotificationID and CorrelationID are the
	// latest values events carried; absent until one did.
	CreatedBy   string `dynamodbav:"created_by,omitempty" json:"created_by,omitempty"`
	Stage       string `dynamodbav:"stage,omitempty" json:"stage,omitempty"`
	MessageType string `dynamodbav:"message_type,omitempty" json:"message_type,omitempty"`
	// Status is one of MessageStatuses().
	Status string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	// Payload is the created event's JSON payload as a DynamoDB value
	// (objects as maps, numbers with their exact text); absent when none.
	Payload *RawValue `dynamodbav:"payload,omitempty" json:"payload,omitempty"`
	// UpdatedDate is the latest recordedat of the message's events.
	UpdatedDate string `dynamodbav:"updated_date,omitempty" json:"updated_date,omitempty"`
	// ProcessingStartedAt is the earliest processing event's time.
	ProcessingStartedAt string `dynamodbav:"processing_started_at,omitempty" json:"processing_started_at,omitempty"`
	// ProcessingCompletedAt is the time of the terminal event whose status
	// won; absent until completed or failed.
	ProcessingCompletedAt string `dynamodbav:"processing_completed_at,omitempty" json:"processing_completed_at,omitempty"`
	// ErrorMessage is present only while the status is failed.
	ErrorMessage string `dynamodbav:"error_message,omitempty" json:"error_message,omitempty"`
	// RetryCount is the greatest retry_count reported; absent when none.
	RetryCount     *int64 `dynamodbav:"retry_count,omitempty" json:"retry_count,omitempty"`
	NotificationID string `dynamodbav:"notification_id,omitempty" json:"notification_id,omitempty"`
	CorrelationID  string `dynamodbav:"correlation_id,omitempty" json:"correlation_id,omitempty"`
	// TTL is the expiry, epoch seconds (AttrTTL).
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
}

// MessageMetricsItem is a stage's daily message-count row of the metrics
// table (scope MessageScope(stage), date "2006-01-02" of the messages'
// created_date). The counters are sums of the messages' contributions: a
// counter never added to is absent (0).
type MessageMetricsItem struct {
	Scope string `dynamodbav:"scope,omitempty" json:"scope,omitempty"`
	Date  string `dynamodbav:"date,omitempty" json:"date,omitempty"`
	// Total counts the day's messages; the others count them by current
	// status.
	Total      int64 `dynamodbav:"total,omitempty" json:"total,omitempty"`
	Created    int64 `dynamodbav:"created,omitempty" json:"created,omitempty"`
	Queued     int64 `dynamodbav:"queued,omitempty" json:"queued,omitempty"`
	Processing int64 `dynamodbav:"processing,omitempty" json:"processing,omitempty"`
	Completed  int64 `dynamodbav:"completed,omitempty" json:"completed,omitempty"`
	Failed     int64 `dynamodbav:"failed,omitempty" json:"failed,omitempty"`
}
