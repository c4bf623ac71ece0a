package projector

import (
	"time"

	"github.com/streamfold/streamfold/schema"
)

func init() { registerFold(KindAgentExecution, func() Aggregate { return &AgentExecutionState{} }) }

// executionStatuses: RUNNING, then one of the terminal statuses (declared
// in schema). Two terminal statuses of one attempt (which EventBridge never
// sends) resolve to the later by (time, id).
var executionStatuses = precedenceOf(KindAgentExecution)

// attemptStride is the number of status ranks per attempt: an event's rank
// is redriveCount*attemptStride + its status's precedence, so the status
// register orders by (redriveCount, precedence, time, id). The RUNNING of
// attempt n+1 outranks every status of attempt n, and a late FAILED of
// attempt n, delivered after the redrive's RUNNING, never wins. States
// folded before redrive was known hold ranks 0 and 1, which are attempt 0's
// ranks under this order.
const attemptStride = 2

// executionRank is the rank of a status of an attempt.
func executionRank(redriveCount int64, status string) (int, bool) {
	p, ok := executionStatuses[status]
	if !ok {
		return 0, false
	}
	return int(redriveCount)*attemptStride + p, true
}

// attemptOf is the attempt (redriveCount) of a ranked stamp.
func attemptOf(s Stamp) int64 { return int64(s.Rank / attemptStride) }

// AgentExecutionState is the fold of one Step Functions execution
// (states/execution/<arn>), projected into the executions table of seed 002
// when its state machine is an agent.
type AgentExecutionState struct {
	ExecutionArn    string `json:"executionArn,omitempty"`
	StateMachineArn string `json:"stateMachineArn,omitempty"`
	Name            string `json:"name,omitempty"`
	// Agent is true once an event's stateMachineTags carry schema.AgentTags.
	Agent bool `json:"agent,omitempty"`
	// StartDate and the other dates are epoch milliseconds, as EventBridge
	// sends them. StartDate is the execution's original start (the least
	// startDate): a redrive keeps it.
	StartDate int64 `json:"startDate,omitempty"`
	// Status is ranked by (redriveCount, status precedence): see
	// attemptStride.
	Status LWW[string] `json:"status,omitzero"`
	// StopDate, RedriveDate and RedriveStatus are written with the ranked
	// stamp of the event that carries them, so each holds the value of the
	// highest-ranked event that had one; Items uses a value only when it
	// belongs to the winning event (StopDate, RedriveStatus) or to its
	// attempt (RedriveDate).
	StopDate      LWW[int64]  `json:"stopDate,omitzero"`
	RedriveDate   LWW[int64]  `json:"redriveDate,omitzero"`
	RedriveStatus LWW[string] `json:"redriveStatus,omitzero"`
	// RedriveCount is the greatest redriveCount seen: the winning status's
	// attempt.
	RedriveCount int64 `json:"redriveCount,omitempty"`
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
	attempt := int64(max(d.RedriveCount, 0))
	keepMax(&a.RedriveCount, attempt)
	if rank, ok := executionRank(attempt, d.Status); ok {
		s := StampOf(e).Ranked(rank)
		a.Status.Set(s, d.Status)
		if d.Terminal() && d.StopDate != nil {
			a.StopDate.Set(s, *d.StopDate)
		}
		if attempt > 0 && d.RedriveDate != nil && *d.RedriveDate > 0 {
			a.RedriveDate.Set(s, *d.RedriveDate)
		}
		if d.RedriveStatus != "" {
			a.RedriveStatus.Set(s, d.RedriveStatus)
		}
	}
	keepLatest(&a.IndexedAt, recordedTime(e))
}

// terminal reports whether the winning status ends its attempt.
func (a *AgentExecutionState) terminal() bool {
	return a.Status.Known() && a.Status.Rank%attemptStride > 0
}

// attemptStart is when the winning attempt began: the original start for
// attempt 0, the redrive's date for a redriven attempt (unknown until an
// event of that attempt carries redriveDate).
func (a *AgentExecutionState) attemptStart() (int64, bool) {
	if a.RedriveCount == 0 {
		return a.StartDate, a.StartDate > 0
	}
	if a.RedriveDate.Known() && attemptOf(a.RedriveDate.Stamp) == a.RedriveCount {
		return a.RedriveDate.V, true
	}
	return 0, false
}

// Items returns the seed 002 index item, or nothing for a non-agent state
// machine. startDate is the original start (the AgentDateIndex and
// StatusDateIndex sort key, so a redrive does not move the execution in
// them); status, stopDate, redriveStatus and durationSeconds are the latest
// attempt's: durationSeconds is stopDate minus the attempt's start
// (redriveDate for a redriven attempt, left out while that is unknown).
// redriveCount is 0 for an execution never redriven; redriveDate is set
// only for a redriven one.
func (a *AgentExecutionState) Items() []Item {
	if !a.Agent || a.ExecutionArn == "" {
		return nil
	}
	machine := a.StateMachineArn
	if machine == "" {
		machine = a.ExecutionArn
	}
	it := schema.ExecutionItem{
		ExecutionArn:    a.ExecutionArn,
		AgentName:       schema.AgentName(machine),
		Status:          lwwStr(a.Status),
		StateMachineArn: a.StateMachineArn,
		ExecutionName:   a.Name,
		RedriveCount:    a.RedriveCount,
		IndexedAt:       timeAttr(a.IndexedAt),
	}
	if a.StartDate > 0 {
		it.StartDate = timeAttr(time.UnixMilli(a.StartDate))
	}
	if a.RedriveStatus.Known() && a.RedriveStatus.Stamp.Compare(a.Status.Stamp) == 0 {
		it.RedriveStatus = a.RedriveStatus.V
	}
	start, startKnown := a.attemptStart()
	if a.RedriveCount > 0 && startKnown {
		it.RedriveDate = timeAttr(time.UnixMilli(start))
	}
	if a.terminal() && a.StopDate.Known() && a.StopDate.Stamp.Compare(a.Status.Stamp) == 0 {
		it.StopDate = timeAttr(time.UnixMilli(a.StopDate.V))
		if startKnown && a.StopDate.V >= start {
			it.DurationSeconds = ptr((a.StopDate.V - start) / 1000)
		}
	}
	return []Item{itemOf(schema.TableExecutions, it)}
}

// Contributions: agent executions feed no counter rows.
func (a *AgentExecutionState) Contributions() []Contribution { return nil }
