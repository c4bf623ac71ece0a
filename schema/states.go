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

func init() {
	register(DomainStates, func() Payload { return new(ExecutionStatusChange) }, TypeExecutionStatusChange)
}

// ExecutionStatusChange is the detail of an EventBridge "Step Functions
// Execution Status Change" event. Dates are epoch milliseconds, as
// EventBridge sends them. StateMachineTags is filled by the ingest adapter
// from ListTagsForResource; the projector indexes only agent state machines.
type ExecutionStatusChange struct {
	ExecutionArn     string            `json:"executionArn"`
	StateMachineArn  string            `json:"stateMachineArn"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	StartDate        int64             `json:"startDate"`
	StopDate         *int64            `json:"stopDate,omitempty"`
	StateMachineTags map[string]string `json:"stateMachineTags,omitempty"`
}

// Subject is "states/execution/<executionArn>".
func (p *ExecutionStatusChange) Subject() string { return "states/execution/" + p.ExecutionArn }

// Terminal reports whether the status ends the execution.
func (p *ExecutionStatusChange) Terminal() bool { return p.Status != ExecutionRunning }

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
	known := c.oneOf("status", p.Status, ExecutionRunning, ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut, ExecutionAborted)
	if p.StartDate <= 0 {
		c.fail("startDate", "must be a positive epoch-milliseconds time")
	}
	switch {
	case p.Status == ExecutionRunning && p.StopDate != nil:
		c.fail("stopDate", "must be absent while status is RUNNING")
	case known && p.Status != ExecutionRunning && p.StopDate == nil:
		c.fail("stopDate", "is required when status is "+p.Status)
	case p.StopDate != nil && *p.StopDate < p.StartDate:
		c.fail("stopDate", "must not be before startDate")
	}
}

// IsStateMachineARN reports whether s looks like a Step Functions state
// machine ARN (arn:...:stateMachine:NAME).
func IsStateMachineARN(s string) bool {
	return strings.HasPrefix(s, "arn:") && strings.Contains(s, ":stateMachine:")
}
