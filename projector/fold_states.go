package projector

import (
	"time"

	"github.com/streamfold/streamfold/schema"
)

// executionStatuses: RUNNING, then one of the terminal statuses. Two terminal
// statuses (which EventBridge never sends) resolve to the later by (time, id).
var executionStatuses = Precedence{
	schema.ExecutionRunning:   0,
	schema.ExecutionSucceeded: 1,
	schema.ExecutionFailed:    1,
	schema.ExecutionTimedOut:  1,
	schema.ExecutionAborted:   1,
}

// AgentExecutionState is the fold of one Step Functions execution
// (states/execution/<arn>), projected into the executions table of seed 002
// when its state machine is an agent.
type AgentExecutionState struct {
	ExecutionArn    string `json:"executionArn,omitempty"`
	StateMachineArn string `json:"stateMachineArn,omitempty"`
	Name            string `json:"name,omitempty"`
	// Agent is true once an event's stateMachineTags carry schema.AgentTags.
	Agent bool `json:"agent,omitempty"`
	// StartDate and the stop date are epoch milliseconds, as EventBridge sends them.
	StartDate int64       `json:"startDate,omitempty"`
	Status    LWW[string] `json:"status,omitzero"`
	// StopDate is written with the status's stamp by terminal events, so it
	// belongs to the event whose status won.
	StopDate LWW[int64] `json:"stopDate,omitzero"`
	// IndexedAt is the latest recordedat.
	IndexedAt time.Time `json:"indexedAt,omitzero"`
}

// Apply folds an aws.states.execution_status_change event.
func (a *AgentExecutionState) Apply(e schema.Event, p schema.Payload) {
	d, ok := payloadOf(e, p).(*schema.ExecutionStatusChange)
	if !ok {
		return
	}
	keepLeast(&a.ExecutionArn, d.ExecutionArn)
	keepLeast(&a.StateMachineArn, d.StateMachineArn)
	keepLeast(&a.Name, d.Name)
	a.Agent = a.Agent || d.IsAgent()
	if d.StartDate > 0 && (a.StartDate == 0 || d.StartDate < a.StartDate) {
		a.StartDate = d.StartDate
	}
	if s, ok := executionStatuses.Offer(&a.Status, d.Status, StampOf(e)); ok && d.StopDate != nil && s.Rank > 0 {
		a.StopDate.Set(s, *d.StopDate)
	}
	keepLatest(&a.IndexedAt, recordedTime(e))
}

// Items returns the seed 002 index item, or nothing for a non-agent state
// machine.
func (a *AgentExecutionState) Items() []Item {
	if !a.Agent || a.ExecutionArn == "" {
		return nil
	}
	machine := a.StateMachineArn
	if machine == "" {
		machine = a.ExecutionArn
	}
	it := make(itemAttrs, 10)
	it.str("executionArn", a.ExecutionArn)
	it.str("agentName", schema.AgentName(machine))
	if a.StartDate > 0 {
		it.at("startDate", time.UnixMilli(a.StartDate))
	}
	it.lwwStr("status", a.Status)
	it.str("stateMachineArn", a.StateMachineArn)
	it.str("executionName", a.Name)
	if a.Status.Known() && a.Status.Rank > 0 && a.StopDate.Known() {
		it.at("stopDate", time.UnixMilli(a.StopDate.V))
		if a.StartDate > 0 {
			it.num("durationSeconds", (a.StopDate.V-a.StartDate)/1000)
		}
	}
	it.at("indexedAt", a.IndexedAt)
	return []Item{{Table: schema.TableExecutions, Item: it}}
}

// Contributions: agent executions feed no counter rows.
func (a *AgentExecutionState) Contributions() []Contribution { return nil }
