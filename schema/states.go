package schema

import (
	"strings"
)

// Step Functions execution status change (seeds 000 and 002).
const TypeExecutionStatusChange = "aws.states.execution_status_change"

// Step Functions execution statuses, as EventBridge reports them.
const (
	ExecutionRunning   = "RUNNING"
	ExecutionSucceeded = "SUCCEEDED"
	ExecutionFailed    = "FAILED"
	ExecutionTimedOut  = "TIMED_OUT"
	ExecutionAborted   = "ABORTED"
)

// AgentTags are the state machine tags that make an execution an agent
// execution (seed 002): both must be present with these values.
var AgentTags = map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}

// AggregateAgentExecution is the kind of subject of Step Functions status
// changes: states/execution/<executionArn>.
const AggregateAgentExecution = "agent-execution"

func init() {
	registerDomain(Descriptor{
		Domain: DomainStates,
		Doc:    "Step Functions execution status changes, agent executions indexed (seeds 000, 002)",
		Aggregates: []Aggregate{{
			Kind: AggregateAgentExecution, Subject: "states/execution/<executionArn>",
			// RUNNING, then one terminal status; the projector ranks them per
			// attempt (redriveCount), see its fold.
			Lifecycle: Lifecycle{{ExecutionRunning, 0}, {ExecutionSucceeded, 1}, {ExecutionFailed, 1}, {ExecutionTimedOut, 1}, {ExecutionAborted, 1}},
		}},
		// The payload carries the status.
		Types:  eventTypes(AggregateAgentExecution, func() Payload { return new(ExecutionStatusChange) }, TypeExecutionStatusChange, ""),
		Tables: []string{TableExecutions},
	})
}

// Step Functions redrive statuses (ExecutionRedriveStatus), as EventBridge
// reports them in redriveStatus. The list is informational: validation
// accepts any value, so that a status AWS adds cannot fail an event.
const (
	RedriveRedrivable         = "REDRIVABLE"
	RedriveNotRedrivable      = "NOT_REDRIVABLE"
	RedriveRedrivableByMapRun = "REDRIVABLE_BY_MAP_RUN"
)

// MaxRedriveCount bounds redriveCount. Step Functions caps an execution's
// history at 25,000 events and every redrive appends at least two
// (ExecutionRedriven and the state it reruns), so no real execution comes
// near it; the bound keeps the projector's (redriveCount, status) order
// within an int.
const MaxRedriveCount = 25_000

// ExecutionStatusChange is the detail of an EventBridge "Step Functions
// Execution Status Change" event. Dates are epoch milliseconds, as
// EventBridge sends them. StateMachineTags is filled by the ingest adapter
// from ListTagsForResource; the projector indexes only agent state machines.
//
// Redrive (Standard workflows, since November 2023): a FAILED, TIMED_OUT or
// ABORTED execution can be redriven under the same ARN; EventBridge then
// sends RUNNING again and later a new terminal status, each with
// redriveCount incremented and redriveDate set to when the attempt began.
// startDate stays the original start. Details sent before redrive existed
// carry none of the redrive members: they mean redriveCount 0.
type ExecutionStatusChange struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	StartDate       int64  `json:"startDate"`
	StopDate        *int64 `json:"stopDate,omitempty"`
	// RedriveCount is how many times the execution has been redriven: 0
	// for the original attempt (and when absent or null), n for the n-th
	// redrive.
	RedriveCount int `json:"redriveCount,omitempty"`
	// RedriveDate is when the latest redrive began (epoch milliseconds);
	// nil before any redrive.
	RedriveDate *int64 `json:"redriveDate,omitempty"`
	// RedriveStatus says whether the execution can be redriven now
	// (RedriveRedrivable, RedriveNotRedrivable, ...); "" when absent.
	RedriveStatus    string            `json:"redriveStatus,omitempty"`
	StateMachineTags map[string]string `json:"stateMachineTags,omitempty"`
}

// Subject is "states/execution/<executionArn>".
func (p *ExecutionStatusChange) Subject() string { return "states/execution/" + p.ExecutionArn }

// Terminal reports whether the status ends the execution's attempt (a
// redrive may start another).
func (p *ExecutionStatusChange) Terminal() bool { return p.Status != ExecutionRunning }

// AttemptStart is when the event's attempt began (epoch milliseconds): the
// redriveDate of a redriven attempt, startDate otherwise. ok is false for a
// redriven attempt whose event lacks redriveDate.
func (p *ExecutionStatusChange) AttemptStart() (ms int64, ok bool) {
	if p.RedriveCount == 0 {
		return p.StartDate, p.StartDate > 0
	}
	if p.RedriveDate == nil {
		return 0, false
	}
	return *p.RedriveDate, true
}

// IsAgent reports whether the state machine carries the agent tags.
func (p *ExecutionStatusChange) IsAgent() bool { return IsAgent(p.StateMachineTags) }

// IsAgent reports whether tags contain every AgentTags pair.
func IsAgent(tags map[string]string) bool {
	for k, v := range AgentTags {
		if tags[k] != v {
			return false
		}
	}
	return true
}

// StateMachineName returns the resource name of a state machine or execution
// ARN's state machine ("arn:aws:states:r:a:stateMachine:my-agent-prod" and
// "arn:aws:states:r:a:execution:my-agent-prod:abc" both give "my-agent-prod").
func StateMachineName(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) >= 7 && (parts[5] == "stateMachine" || parts[5] == "execution" || parts[5] == "express") {
		return parts[6]
	}
	return ""
}

// stageSuffixes are the deployment stage suffixes that AgentName strips.
var stageSuffixes = []string{"-dev", "-stage", "-staging", "-prod", "-production", "-test"}

// AgentName derives the agent's name from its state machine name by removing
// a trailing stage suffix, as seed 002 does ("my-agent-prod" -> "my-agent").
func AgentName(stateMachineArn string) string {
	name := StateMachineName(stateMachineArn)
	for _, s := range stageSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return strings.TrimSuffix(name, s)
		}
	}
	return name
}

func (p *ExecutionStatusChange) validate(c *checker, _ string) {
	if c.required("executionArn", p.ExecutionArn) && (!strings.HasPrefix(p.ExecutionArn, "arn:") || StateMachineName(p.ExecutionArn) == "" || strings.Contains(p.ExecutionArn, ":stateMachine:")) {
		c.fail("executionArn", "must be a Step Functions execution ARN (arn:...:execution:MACHINE:NAME)")
	}
	if c.required("stateMachineArn", p.StateMachineArn) && !IsStateMachineARN(p.StateMachineArn) {
		c.fail("stateMachineArn", "must be a Step Functions state machine ARN (arn:...:stateMachine:NAME)")
	}
	if p.ExecutionArn != "" && p.StateMachineArn != "" && StateMachineName(p.ExecutionArn) != "" &&
		StateMachineName(p.ExecutionArn) != StateMachineName(p.StateMachineArn) {
		c.fail("executionArn", "must belong to stateMachineArn")
	}
	c.required("name", p.Name)
	c.maxBytes("executionArn", p.ExecutionArn, MaxARNBytes)
	c.maxBytes("stateMachineArn", p.StateMachineArn, MaxARNBytes)
	c.maxBytes("name", p.Name, MaxNameBytes)
	known := c.oneOf("status", p.Status, ExecutionRunning, ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut, ExecutionAborted)
	if p.StartDate <= 0 {
		c.fail("startDate", "must be a positive epoch-milliseconds time")
	}
	switch {
	case p.Status == ExecutionRunning && p.StopDate != nil && p.RedriveCount == 0:
		c.fail("stopDate", "must be absent while status is RUNNING")
	case p.Status == ExecutionRunning && p.StopDate != nil:
		// A redriven RUNNING event's stopDate, should AWS send one, can
		// only be the previous attempt's: tolerated, and ignored by the
		// projector.
	case known && p.Status != ExecutionRunning && p.StopDate == nil:
		c.fail("stopDate", "is required when status is "+p.Status)
	case p.StopDate != nil && *p.StopDate < p.StartDate:
		c.fail("stopDate", "must not be before startDate")
	case p.StopDate != nil && p.RedriveCount > 0 && p.RedriveDate != nil && *p.RedriveDate > 0 && *p.StopDate < *p.RedriveDate:
		c.fail("stopDate", "must not be before redriveDate")
	}
	if p.RedriveCount < 0 || p.RedriveCount > MaxRedriveCount {
		c.fail("redriveCount", "must be between 0 and "+itoa(MaxRedriveCount))
	}
	if p.RedriveDate != nil {
		switch {
		case *p.RedriveDate <= 0:
			c.fail("redriveDate", "must be a positive epoch-milliseconds time (or null)")
		case p.StartDate > 0 && *p.RedriveDate < p.StartDate:
			c.fail("redriveDate", "must not be before startDate")
		}
	}
}

// IsStateMachineARN reports whether s looks like a Step Functions state
// machine ARN (arn:...:stateMachine:NAME).
func IsStateMachineARN(s string) bool {
	return strings.HasPrefix(s, "arn:") && strings.Contains(s, ":stateMachine:")
}
