package archiver

import "github.com/streamfold/streamfold/schema"

// TableAgentExecutions holds schema.DomainStates: aws.states.execution_status_change.
const TableAgentExecutions = "agent_executions"

type sfnP = *schema.ExecutionStatusChange

// agentExecutionCols are the typed columns, in file order: add a column only at the
// end (see newTableDef).
var agentExecutionCols = []colDef{
	payloadCol("execution_arn", TypeString, "Step Functions execution ARN", false, func(p sfnP) any { return optStr(p.ExecutionArn) }),
	payloadCol("state_machine_arn", TypeString, "state machine ARN", true, func(p sfnP) any { return optStr(p.StateMachineArn) }),
	payloadCol("execution_name", TypeString, "execution name", false, func(p sfnP) any { return optStr(p.Name) }),
	payloadCol("agent_name", TypeString, "agent name (state machine name without its stage suffix); null unless the state machine carries the agent tags", true,
		func(p sfnP) any {
			if !p.IsAgent() {
				return nil
			}
			return optStr(schema.AgentName(p.StateMachineArn))
		}),
	payloadCol("is_agent", TypeBoolean, "whether the state machine carries the tags Type=Agent and Application=StepFunctionsAgent", false,
		func(p sfnP) any { return p.IsAgent() }),
	payloadCol("status", TypeString, "RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED", true, func(p sfnP) any { return optStr(p.Status) }),
	payloadCol("start_date", TypeTimestamp, "execution start (UTC, microseconds)", false, func(p sfnP) any { return epochMillis(p.StartDate) }),
	payloadCol("stop_date", TypeTimestamp, "execution stop (UTC, microseconds); null while running", false, func(p sfnP) any {
		if p.StopDate == nil {
			return nil
		}
		return epochMillis(*p.StopDate)
	}),
	payloadCol("duration_ms", TypeBigint, "stop_date - start_date in ms; null while running", false, func(p sfnP) any {
		if p.StopDate == nil || p.StartDate <= 0 {
			return nil
		}
		return *p.StopDate - p.StartDate
	}),
	payloadCol("state_machine_tags", TypeString, "state machine tags as a JSON object", false, func(p sfnP) any {
		if p.StateMachineTags == nil {
			return nil
		}
		return jsonText(p.StateMachineTags)
	}),
}

func init() {
	registerTable(newTableDef(schema.DomainStates, TableAgentExecutions, "Step Functions agent execution status changes (aws.states.execution_status_change), one row per event; non-agent state machines have is_agent = false.", agentExecutionCols))
}
