package simulate

import (
	"time"

	"github.com/streamfold/streamfold/schema"
)

// Step Functions executions (seeds 000 and 002): the EventBridge "Execution
// Status Change" detail, with the stateMachineTags that the ingest adapter
// adds. Most machines are agents; a few are not and must not be indexed.

const (
	sfnRegion  = "us-west-2"
	sfnAccount = "123456789012"
)

type sfnMachine struct {
	name        string // state machine name, with its stage suffix
	tags        map[string]string
	weight      int
	lo, mid, hi time.Duration // run time
	timeout     time.Duration
	prompts     []string
}

type sfnState struct {
	machines []sfnMachine
	weights  []int
}

func agentTags(stage, team string) map[string]string {
	t := map[string]string{"Environment": stage, "Team": team}
	for k, v := range schema.AgentTags {
		t[k] = v
	}
	return t
}

func (st *sfnState) init() {
	st.machines = []sfnMachine{
		{name: "research-agent-prod", tags: agentTags("prod", "research"), weight: 30,
			lo: 8 * time.Second, mid: 90 * time.Second, hi: 12 * time.Minute, timeout: 15 * time.Minute,
			prompts: []string{"Summarize the Q4 churn analysis", "Compare DynamoDB and Aurora pricing for 10k writes/s", "Find recent papers on speculative decoding"}},
		{name: "sql-agent-prod", tags: agentTags("prod", "data"), weight: 25,
			lo: 3 * time.Second, mid: 25 * time.Second, hi: 3 * time.Minute, timeout: 5 * time.Minute,
			prompts: []string{"Top 10 customers by revenue last month", "Weekly active users by region", "Orders with refunds over $500"}},
		{name: "support-triage-agent-prod", tags: agentTags("prod", "support"), weight: 20,
			lo: 2 * time.Second, mid: 15 * time.Second, hi: 2 * time.Minute, timeout: 5 * time.Minute,
			prompts: []string{"Ticket #48213: cannot reset password", "Ticket #48290: invoice shows wrong VAT", "Ticket #48311: API returns 502"}},
		{name: "web-research-agent-prod", tags: agentTags("prod", "research"), weight: 10,
			lo: 10 * time.Second, mid: 2 * time.Minute, hi: 14 * time.Minute, timeout: 15 * time.Minute,
			prompts: []string{"What changed in Go 1.26?", "Latest EC2 spot pricing trends for c7g"}},
		{name: "code-review-agent-dev", tags: agentTags("dev", "platform"), weight: 5,
			lo: 5 * time.Second, mid: 40 * time.Second, hi: 4 * time.Minute, timeout: 5 * time.Minute,
			prompts: []string{"Review PR #1182", "Review PR #1190"}},
		// Not agents: a batch job, and a machine tagged Type=Agent for
		// another application, which seed 002's filter must also skip.
		{name: "nightly-etl-prod", tags: map[string]string{"Type": "Batch", "Team": "data"}, weight: 6,
			lo: 2 * time.Minute, mid: 12 * time.Minute, hi: 40 * time.Minute, timeout: time.Hour,
			prompts: []string{"etl"}},
		{name: "image-resize-prod", tags: map[string]string{"Type": "Agent", "Application": "ImagePipeline"}, weight: 4,
			lo: time.Second, mid: 5 * time.Second, hi: 30 * time.Second, timeout: time.Minute,
			prompts: []string{"resize"}},
	}
	for _, m := range st.machines {
		st.weights = append(st.weights, m.weight)
	}
}

// sfnDetail is the EventBridge detail of an execution status change.
type sfnDetail struct {
	ExecutionArn     string            `json:"executionArn"`
	StateMachineArn  string            `json:"stateMachineArn"`
	Name             string            `json:"name"`
	Status           string            `json:"status"`
	StartDate        int64             `json:"startDate"`
	StopDate         *int64            `json:"stopDate"`
	Input            string            `json:"input"`
	Output           *string           `json:"output"`
	InputDetails     sfnIncluded       `json:"inputDetails"`
	OutputDetails    *sfnIncluded      `json:"outputDetails"`
	Error            *string           `json:"error"`
	Cause            *string           `json:"cause"`
	RedriveCount     int               `json:"redriveCount"`
	RedriveStatus    string            `json:"redriveStatus"`
	StateMachineTags map[string]string `json:"stateMachineTags,omitempty"`
}

type sfnIncluded struct {
	Included bool `json:"included"`
}

// stateMachineExecution simulates one execution: RUNNING, then SUCCEEDED
// (about 80%), FAILED, TIMED_OUT or ABORTED. An execution still running at
// the end of the window has only its RUNNING event.
func (g *gen) stateMachineExecution(at time.Time) {
	m := g.sfn.machines[g.weighted(g.sfn.weights)]
	name := g.uuid()
	start := msec(at)
	d := sfnDetail{
		ExecutionArn:     "arn:aws:states:" + sfnRegion + ":" + sfnAccount + ":execution:" + m.name + ":" + name,
		StateMachineArn:  "arn:aws:states:" + sfnRegion + ":" + sfnAccount + ":stateMachine:" + m.name,
		Name:             name,
		Status:           schema.ExecutionRunning,
		StartDate:        start.UnixMilli(),
		Input:            `{"prompt":"` + m.prompts[g.r.IntN(len(m.prompts))] + `","sessionId":"` + g.uuid() + `"}`,
		InputDetails:     sfnIncluded{true},
		RedriveStatus:    "NOT_REDRIVABLE",
		StateMachineTags: m.tags,
	}
	subject := "states/execution/" + d.ExecutionArn
	r := d // d changes below; the payload of an event must not
	running := g.event(g.uuid(), "aws.states", schema.TypeExecutionStatusChange, subject, start, &r)
	startedAt := start

	stop := start.Add(g.skewed(m.lo, m.mid, m.hi))
	switch r := g.r.IntN(1000); {
	case r < 800:
		d.Status = schema.ExecutionSucceeded
		d.Output = ptr(`{"status":"ok","tokens":` + itoa(int64(g.intIn(300, 40_000))) + `}`)
		d.OutputDetails = &sfnIncluded{true}
	case r < 920:
		d.Status = schema.ExecutionFailed
		d.Error = ptr([]string{"States.TaskFailed", "Lambda.ServiceException", "ThrottlingException"}[g.r.IntN(3)])
		d.Cause = ptr([]string{
			`{"errorMessage":"model returned 429 too many requests","errorType":"ThrottlingException"}`,
			`{"errorMessage":"tool call failed: connection reset by peer","errorType":"ToolError"}`,
			`{"errorMessage":"context length exceeded","errorType":"ValidationException"}`,
		}[g.r.IntN(3)])
		d.RedriveStatus = "REDRIVABLE"
	case r < 960:
		d.Status = schema.ExecutionTimedOut
		d.Error = ptr("States.Timeout")
		stop = start.Add(m.timeout)
		d.RedriveStatus = "REDRIVABLE"
	default:
		d.Status = schema.ExecutionAborted
		stop = start.Add(g.between(time.Second, max(stop.Sub(start), 2*time.Second)))
	}
	stop = msec(stop)
	d.StopDate = ptr(stop.UnixMilli())
	terminal := g.event(g.uuid(), "aws.states", schema.TypeExecutionStatusChange, subject, stop, &d)
	stoppedAt := stop.Add(g.between(0, 300*time.Millisecond))

	lat := func() time.Duration { return g.between(200*time.Millisecond, 1500*time.Millisecond) }
	// EventBridge is at-least-once and unordered: about 1% of events come
	// twice (within 30 seconds in OrderTime, 5 minutes in OrderSubject),
	// and for about 2% of executions RUNNING arrives after the end.
	redeliver := func() time.Duration {
		if g.chance(10) {
			if g.cfg.Order == OrderTime {
				return g.between(time.Second, 30*time.Second)
			}
			return g.between(time.Second, 5*time.Minute)
		}
		return 0
	}
	if g.chance(20) {
		startedAt = stoppedAt.Add(g.between(100*time.Millisecond, 3*time.Second))
	}
	g.add(running, startedAt, lat(), redeliver())
	g.add(terminal, stoppedAt, lat(), redeliver())
}
