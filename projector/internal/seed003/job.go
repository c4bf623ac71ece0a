package seed003

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// statusRank orders the seed's job statuses; a job never moves back.
var statusRank = map[string]int{"queued": 0, "waiting": 1, "scheduled": 2, "in_progress": 3, "completed": 4}

// moveStatus sets next's status to status unless that would move it back.
func moveStatus(next Item, status string) {
	if cur, ok := next["status"].(*types.AttributeValueMemberS); ok && statusRank[status] <= statusRank[cur.Value] {
		return
	}
	next["status"] = avS(status)
}

// webhookExtras are the webhook fields the seed's item keeps that
// schema.WorkflowJobWebhook does not decode.
type webhookExtras struct {
	WorkflowJob struct {
		WorkflowID *int64 `json:"workflow_id"`
	} `json:"workflow_job"`
	Repository struct {
		CustomProperties map[string]string `json:"custom_properties"`
	} `json:"repository"`
}

// foldWebhook returns the job item after a workflow_job webhook: prev
// (nil for a new job) with the webhook's attributes, received the time it
// was received.
func foldWebhook(prev Item, p *schema.WorkflowJobWebhook, raw json.RawMessage, received time.Time) Item {
	next := maps.Clone(prev)
	if next == nil {
		next = Item{}
	}
	inst, j := p.InstallationID(), p.WorkflowJob
	next[attrPK] = avS(schema.JobKey(inst, j.ID))
	next[attrSK] = avS("v")
	next["installation_id"] = avN(inst)
	next["job_id"] = avN(j.ID)
	next["run_id"] = avN(j.RunID)
	next["run_attempt"] = avN(int64(j.RunAttempt))
	switch {
	case p.Organization != nil && p.Organization.Login != "":
		next["org_name"] = avS(p.Organization.Login)
	case p.Repository.Owner != nil && p.Repository.Owner.Login != "":
		next["org_name"] = avS(p.Repository.Owner.Login)
	}
	next["repo_full_name"] = avS(p.Repository.FullName)
	next["repo_is_private"] = avBool(p.Repository.Private)
	var x webhookExtras
	if json.Unmarshal(raw, &x) == nil {
		if x.WorkflowJob.WorkflowID != nil {
			next["workflow_id"] = avN(*x.WorkflowJob.WorkflowID)
		}
		if len(x.Repository.CustomProperties) > 0 {
			m := Item{}
			for k, v := range x.Repository.CustomProperties {
				m[k] = avS(v)
			}
			next["custom_properties"] = &types.AttributeValueMemberM{Value: m}
		}
	}
	setS(next, "workflow_name", j.WorkflowName)
	setS(next, "job_name", j.Name)
	setS(next, "head_sha", j.HeadSHA)
	setS(next, "default_branch", p.Repository.DefaultBranch)
	setS(next, "job_html_url", j.HTMLURL)
	if _, ok := next[attrCreated]; !ok {
		if t := firstTime(j.CreatedAt, j.StartedAt); !t.IsZero() {
			next[attrCreated] = avS(isoTime(t))
		}
	}
	if _, ok := next["received_at"]; !ok {
		next["received_at"] = avS(isoTime(received))
	}
	moveStatus(next, p.Action)
	if p.Action == "in_progress" || p.Action == "completed" {
		if _, ok := next["started_at"]; !ok && j.StartedAt != nil {
			next["started_at"] = avS(isoTime(*j.StartedAt))
		}
	}
	if p.Action == "completed" {
		if j.Conclusion != nil {
			next["conclusion"] = avS(*j.Conclusion)
		}
		if j.CompletedAt != nil {
			next["completed_at"] = avS(isoTime(*j.CompletedAt))
		}
	}
	if _, ok := next["was_interrupted"]; !ok {
		next["was_interrupted"] = avBool(false)
	}
	if j.RunnerID != nil {
		next["runner_id"] = avN(*j.RunnerID)
	}
	if j.RunnerName != nil && *j.RunnerName != "" {
		next["runner_name"] = avS(*j.RunnerName)
	}
	if j.RunnerGroupID != nil {
		next["runner_group_id"] = avN(*j.RunnerGroupID)
	}
	if len(j.Labels) > 0 {
		l := make([]types.AttributeValue, len(j.Labels))
		for i, s := range j.Labels {
			l[i] = avS(s)
		}
		next["labels"] = &types.AttributeValueMemberL{Value: l}
	}
	if p.Deployment != nil {
		next["deployment_id"] = avN(p.Deployment.ID)
	}
	return finishJob(next, inst, received)
}

// foldRunner returns the job item after a RunsOn runner event.
func foldRunner(prev Item, eventType string, p *schema.RunnerEvent, received time.Time) Item {
	next := maps.Clone(prev)
	if next == nil {
		next = Item{}
	}
	next[attrPK] = avS(schema.JobKey(p.InstallationID, p.JobID))
	next[attrSK] = avS("v")
	next["installation_id"] = avN(p.InstallationID)
	next["job_id"] = avN(p.JobID)
	if _, ok := next["run_id"]; !ok && p.RunID > 0 {
		next["run_id"] = avN(p.RunID)
		next["run_attempt"] = avN(int64(max(p.RunAttempt, 1)))
	}
	if _, ok := next["repo_full_name"]; !ok {
		setS(next, "repo_full_name", p.RepoFullName)
	}
	setS(next, "instance_id", p.InstanceID)
	setS(next, "instance_type", p.InstanceType)
	setS(next, "instance_lifecycle", p.InstanceLifecycle)
	setS(next, "fleet_id", p.FleetID)
	setS(next, "pool_name", p.PoolName)
	if _, ok := next["scheduled_at"]; !ok && p.ScheduledAt != nil {
		next["scheduled_at"] = avS(isoTime(*p.ScheduledAt))
	}
	switch eventType {
	case schema.TypeRunnerScheduled:
		moveStatus(next, "scheduled")
	case schema.TypeRunnerInterrupted:
		next["was_interrupted"] = avBool(true)
	}
	if _, ok := next["was_interrupted"]; !ok {
		next["was_interrupted"] = avBool(false)
	}
	addNumber(next, "usage_in_seconds", p.UsageInSeconds)
	addNumber(next, "usage_in_dollars", p.UsageInDollars)
	return finishJob(next, p.InstallationID, received)
}

// finishJob sets what follows from the job's attributes: the queue
// durations, the index keys, last_updated_at and (on creation) ttl.
func finishJob(next Item, inst int64, received time.Time) Item {
	started, okS := timeAttr(next, "started_at")
	if created, ok := timeAttr(next, attrCreated); ok && okS && !started.Before(created) {
		next["overall_queue_duration_in_ms"] = avN(started.Sub(created).Milliseconds())
	}
	if sched, ok := timeAttr(next, "scheduled_at"); ok && okS && !started.Before(sched) {
		next["internal_queue_duration_in_ms"] = avN(started.Sub(sched).Milliseconds())
	}
	i := strconv.FormatInt(inst, 10)
	if s, ok := next["status"].(*types.AttributeValueMemberS); ok {
		next[gsi1PK] = avS(i + "#" + s.Value)
	}
	if r, ok := next["repo_full_name"].(*types.AttributeValueMemberS); ok {
		next[gsi2PK] = avS(i + "#" + r.Value)
	}
	run, okR := next["run_id"].(*types.AttributeValueMemberN)
	att, okA := next["run_attempt"].(*types.AttributeValueMemberN)
	if okR && okA {
		next[gsi3PK] = avS(i + "#" + run.Value + "#" + att.Value)
	}
	next["last_updated_at"] = avS(isoTime(received))
	if _, ok := next[attrTTL]; !ok {
		next[attrTTL] = avN(received.Add(jobTTL).Unix())
	}
	return next
}

// eventRow is the workflow_job_events row of one event of the job next
// (the state after the event), with the changes from prev.
func eventRow(prev, next Item, eventType, action, source string, at, received time.Time) Item {
	row := Item{
		attrPK:            next[attrPK],
		attrSK:            avS(isoTime(at) + "#" + eventType),
		"installation_id": next["installation_id"],
		"job_id":          next["job_id"],
		"event_type":      avS(eventType),
		"timestamp":       avS(isoTime(at)),
		"source":          avS(source),
		attrTTL:           avN(received.Add(eventTTL).Unix()),
	}
	if s, ok := next["status"]; ok {
		row["status"] = s
	}
	if action != "" {
		row["action"] = avS(action)
	}
	if ch := changes(prev, next); len(ch) > 0 {
		row["changes"] = &types.AttributeValueMemberM{Value: ch}
	}
	return row
}

// eventType is the seed's event_type of a streamfold event type:
// webhook_<action> for a webhook, runner_<what> for a runner event.
func eventType(t string) string {
	if a, ok := strings.CutPrefix(t, schema.WorkflowJobTypePrefix); ok {
		return "webhook_" + a
	}
	return "runner_" + t[strings.LastIndexByte(t, '.')+1:]
}

// runCounters returns the counters of the job's run that the change from
// prev to next moves: total_jobs on the job's first webhook (the first
// state with a job_name), completed_jobs when it completes, failed_jobs
// when it completes with a failed conclusion.
func runCounters(prev, next Item) map[string]int64 {
	out := map[string]int64{}
	if _, had := prev["job_name"]; !had {
		if _, has := next["job_name"]; has {
			out["total_jobs"] = 1
		}
	}
	if str(prev, "status") != "completed" && str(next, "status") == "completed" {
		out["completed_jobs"] = 1
		if slices.Contains(schema.FailedConclusions(), str(next, "conclusion")) {
			out["failed_jobs"] = 1
		}
	}
	return out
}

func setS(it Item, name, v string) {
	if v != "" {
		it[name] = avS(v)
	}
}

func str(it Item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func timeAttr(it Item, name string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, str(it, name))
	return t, err == nil
}

func firstTime(ts ...*time.Time) time.Time {
	for _, t := range ts {
		if t != nil && !t.IsZero() {
			return *t
		}
	}
	return time.Time{}
}

// addNumber adds v to the number attribute name (usage summed over the
// job's instances).
func addNumber(it Item, name string, v *float64) {
	if v == nil {
		return
	}
	sum := *v
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			sum += f
		}
	}
	it[name] = &types.AttributeValueMemberN{Value: strconv.FormatFloat(sum, 'f', -1, 64)}
}
