package schema

// ExecutionItem is an agent execution of the executions table (seeds 000
// and 002), as the agent-execution fold writes it. Dates are the times
// EventBridge reports, as ISO 8601 strings.
type ExecutionItem struct {
	// ExecutionArn is the table's key.
	ExecutionArn string `dynamodbav:"executionArn,omitempty" json:"executionArn,omitempty"`
	// AgentName is AgentName of the state machine (AgentDateIndex's key).
	AgentName string `dynamodbav:"agentName,omitempty" json:"agentName,omitempty"`
	// StartDate is the original start: a redrive keeps it.
	StartDate string `dynamodbav:"startDate,omitempty" json:"startDate,omitempty"`
	// Status is the latest attempt's (RUNNING, SUCCEEDED, FAILED,
	// TIMED_OUT, ABORTED).
	Status          string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	StateMachineArn string `dynamodbav:"stateMachineArn,omitempty" json:"stateMachineArn,omitempty"`
	ExecutionName   string `dynamodbav:"executionName,omitempty" json:"executionName,omitempty"`
	// RedriveCount is the latest attempt, 0 for an execution never
	// redriven; always present.
	RedriveCount int64 `dynamodbav:"redriveCount" json:"redriveCount"`
	// RedriveStatus is the winning event's, absent when it had none.
	RedriveStatus string `dynamodbav:"redriveStatus,omitempty" json:"redriveStatus,omitempty"`
	// RedriveDate is the redriven attempt's start, absent for attempt 0
	// and while unknown.
	RedriveDate string `dynamodbav:"redriveDate,omitempty" json:"redriveDate,omitempty"`
	// StopDate is set once the latest attempt ended, DurationSeconds with
	// it when the attempt's start is known.
	StopDate        string `dynamodbav:"stopDate,omitempty" json:"stopDate,omitempty"`
	DurationSeconds *int64 `dynamodbav:"durationSeconds,omitempty" json:"durationSeconds,omitempty"`
	// IndexedAt is the latest recordedat of the execution's events.
	IndexedAt string `dynamodbav:"indexedAt,omitempty" json:"indexedAt,omitempty"`
}
