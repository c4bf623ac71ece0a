package projector

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/streamfold/streamfold/schema"
)

func init() {
	registerFold(KindJob, func() Aggregate { return &JobState{} })
	registerFold(KindDeployment, func() Aggregate { return &DeploymentState{} })
}

// Job statuses (seed 003, declared in schema): queued < waiting < scheduled
// < in_progress < completed. A late queued webhook never moves a job back;
// "scheduled" comes from runson.runner.scheduled.
var jobStatuses = precedenceOf(KindJob)

// JobState is the fold of one GitHub workflow job and its RunsOn runners
// (github/<installation>/job/<id>): the seed 003 workflow_jobs item, which
// is also the job's share of its run's summary (runShare).
type JobState struct {
	InstallationID int64 `json:"installationId"`
	JobID          int64 `json:"jobId,omitempty"`
	RunID          int64 `json:"runId,omitempty"`
	RunAttempt     int64 `json:"runAttempt,omitempty"`
	// OtherRunIDs and OtherRunAttempts are the run ids and attempts the
	// job's events named besides RunID and RunAttempt (the greatest), in
	// order: GitHub never moves a job, so they are empty unless a producer
	// sent another run for the job. The job's share of each such run is
	// written empty (runShares), so that it never counts in two runs.
	OtherRunIDs      []int64 `json:"otherRunIds,omitempty"`
	OtherRunAttempts []int64 `json:"otherRunAttempts,omitempty"`

	OrgName       LWW[string]   `json:"orgName,omitzero"`
	RepoFullName  LWW[string]   `json:"repoFullName,omitzero"`
	RepoIsPrivate LWW[bool]     `json:"repoIsPrivate,omitzero"`
	DefaultBranch LWW[string]   `json:"defaultBranch,omitzero"`
	WorkflowID    LWW[int64]    `json:"workflowId,omitzero"`
	WorkflowName  LWW[string]   `json:"workflowName,omitzero"`
	JobName       LWW[string]   `json:"jobName,omitzero"`
	HeadSHA       LWW[string]   `json:"headSha,omitzero"`
	HeadBranch    LWW[string]   `json:"headBranch,omitzero"`
	HTMLURL       LWW[string]   `json:"htmlUrl,omitzero"`
	Labels        LWW[[]string] `json:"labels,omitzero"`
	DeploymentID  LWW[int64]    `json:"deploymentId,omitzero"`
	RunnerID      LWW[int64]    `json:"runnerId,omitzero"`
	RunnerName    LWW[string]   `json:"runnerName,omitzero"`
	RunnerGroupID LWW[int64]    `json:"runnerGroupId,omitzero"`

	Status LWW[string] `json:"status,omitzero"`
	// Conclusion and CompletedAt are written by completed webhooks with the
	// status's stamp.
	Conclusion  LWW[string]    `json:"conclusion,omitzero"`
	CompletedAt LWW[time.Time] `json:"completedAt,omitzero"`

	// CreatedAt is the job's created_at; ReceivedAt the earliest recordedat
	// of a webhook; ScheduledAt the first runner scheduling's scheduled_at;
	// StartedAt the earliest started_at of an in_progress or completed
	// webhook (queued bodies carry started_at = created_at, so they do not
	// count); FirstAt the earliest event time; UpdatedAt the latest recordedat.
	CreatedAt   time.Time `json:"createdAt,omitzero"`
	ReceivedAt  time.Time `json:"receivedAt,omitzero"`
	ScheduledAt time.Time `json:"scheduledAt,omitzero"`
	StartedAt   time.Time `json:"startedAt,omitzero"`
	FirstAt     time.Time `json:"firstAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
	// CreatedFallback stands in for created_at while no webhook carried
	// one (older GitHub Enterprise Server versions do not send it): the
	// earliest started_at or event time of the webhooks without it, the
	// earliest time known of the job. A later webhook with created_at
	// overrides it.
	CreatedFallback time.Time `json:"createdFallback,omitzero"`

	// Instance fields come from runner events: each from the latest event
	// that carries it, so after a rescheduling they describe the new
	// instance.
	InstanceID        LWW[string] `json:"instanceId,omitzero"`
	InstanceType      LWW[string] `json:"instanceType,omitzero"`
	InstanceLifecycle LWW[string] `json:"instanceLifecycle,omitzero"`
	FleetID           LWW[string] `json:"fleetId,omitzero"`
	PoolName          LWW[string] `json:"poolName,omitzero"`
	WasInterrupted    bool        `json:"wasInterrupted,omitempty"`
	// Usage holds each instance's latest reported usage, by instance_id: the
	// job's usage is their sum, so two instances add up and a repeated
	// report of one instance counts once.
	Usage map[string]LWW[RunnerUsage] `json:"usage,omitempty"`
}

// RunnerUsage is an instance's usage as a runner event reports it.
type RunnerUsage struct {
	Seconds *float64 `json:"seconds,omitempty"`
	Dollars *float64 `json:"dollars,omitempty"`
}

// Apply folds github.workflow_job.* and runson.runner.* events.
func (j *JobState) Apply(e schema.Event, p schema.Payload) {
	s := StampOf(e)
	switch d := payloadOf(e, p).(type) {
	case *schema.WorkflowJobWebhook:
		j.applyWebhook(e, d, s)
	case *schema.RunnerEvent:
		j.applyRunner(e, d, s)
	default:
		return
	}
	keepEarliest(&j.FirstAt, e.Time)
	keepLatest(&j.UpdatedAt, recordedTime(e))
}

func (j *JobState) applyWebhook(e schema.Event, d *schema.WorkflowJobWebhook, s Stamp) {
	wj := &d.WorkflowJob
	keepMax(&j.InstallationID, d.InstallationID())
	keepMax(&j.JobID, wj.ID)
	keepMaxOthers(&j.RunID, &j.OtherRunIDs, wj.RunID)
	keepMaxOthers(&j.RunAttempt, &j.OtherRunAttempts, int64(wj.RunAttempt))

	org := ""
	switch {
	case d.Organization != nil && d.Organization.Login != "":
		org = d.Organization.Login
	case d.Repository.Owner != nil && d.Repository.Owner.Login != "":
		org = d.Repository.Owner.Login
	default:
		org, _, _ = strings.Cut(d.Repository.FullName, "/")
	}
	setStr(&j.OrgName, s, org)
	setStr(&j.RepoFullName, s, d.Repository.FullName)
	j.RepoIsPrivate.Set(s, d.Repository.Private)
	setStr(&j.DefaultBranch, s, d.Repository.DefaultBranch)
	if id, ok := webhookWorkflowID(e.Data); ok {
		j.WorkflowID.Set(s, id)
	}
	setStr(&j.WorkflowName, s, wj.WorkflowName)
	setStr(&j.JobName, s, wj.Name)
	setStr(&j.HeadSHA, s, wj.HeadSHA)
	setStr(&j.HeadBranch, s, wj.HeadBranch)
	setStr(&j.HTMLURL, s, wj.HTMLURL)
	if len(wj.Labels) > 0 {
		j.Labels.Set(s, wj.Labels)
	}
	if d.Deployment != nil && d.Deployment.ID > 0 {
		j.DeploymentID.Set(s, d.Deployment.ID)
	}
	if wj.RunnerID != nil && *wj.RunnerID > 0 {
		j.RunnerID.Set(s, *wj.RunnerID)
	}
	if wj.RunnerName != nil {
		setStr(&j.RunnerName, s, *wj.RunnerName)
	}
	if wj.RunnerGroupID != nil && *wj.RunnerGroupID > 0 {
		j.RunnerGroupID.Set(s, *wj.RunnerGroupID)
	}
	if wj.CreatedAt != nil {
		keepEarliest(&j.CreatedAt, *wj.CreatedAt)
	} else {
		keepEarliest(&j.CreatedFallback, e.Time)
		if wj.StartedAt != nil {
			keepEarliest(&j.CreatedFallback, *wj.StartedAt)
		}
	}
	keepEarliest(&j.ReceivedAt, recordedTime(e))

	status := statusOf(e)
	if status == "queued" && wj.Status == "waiting" {
		// A queued delivery of a job that already waits for a deployment
		// protection rule's approval.
		status = "waiting"
	}
	rs, _ := jobStatuses.Offer(&j.Status, status, s)
	switch d.Action {
	case "in_progress", "completed":
		if wj.StartedAt != nil {
			keepEarliest(&j.StartedAt, *wj.StartedAt)
		}
	}
	if d.Action == "completed" {
		if wj.Conclusion != nil && *wj.Conclusion != "" {
			j.Conclusion.Set(rs, *wj.Conclusion)
		}
		if wj.CompletedAt != nil && !wj.CompletedAt.IsZero() {
			j.CompletedAt.Set(rs, wj.CompletedAt.UTC())
		}
	}
}

// webhookWorkflowID reads workflow_job.workflow_id, which
// schema.WorkflowJob does not decode; GitHub's webhook usually lacks it.
func webhookWorkflowID(data []byte) (int64, bool) {
	if !bytes.Contains(data, []byte(`"workflow_id"`)) {
		return 0, false
	}
	var v struct {
		WorkflowJob struct {
			WorkflowID *int64 `json:"workflow_id"`
		} `json:"workflow_job"`
	}
	if json.Unmarshal(data, &v) != nil || v.WorkflowJob.WorkflowID == nil || *v.WorkflowJob.WorkflowID <= 0 {
		return 0, false
	}
	return *v.WorkflowJob.WorkflowID, true
}

func (j *JobState) applyRunner(e schema.Event, d *schema.RunnerEvent, s Stamp) {
	keepMax(&j.InstallationID, d.InstallationID)
	keepMax(&j.JobID, d.JobID)
	keepMaxOthers(&j.RunID, &j.OtherRunIDs, d.RunID)
	keepMaxOthers(&j.RunAttempt, &j.OtherRunAttempts, int64(d.RunAttempt))
	setStr(&j.RepoFullName, s, d.RepoFullName)
	setStr(&j.InstanceID, s, d.InstanceID)
	setStr(&j.InstanceType, s, d.InstanceType)
	setStr(&j.InstanceLifecycle, s, d.InstanceLifecycle)
	setStr(&j.FleetID, s, d.FleetID)
	setStr(&j.PoolName, s, d.PoolName)
	switch e.Type {
	case schema.TypeRunnerScheduled:
		jobStatuses.Offer(&j.Status, statusOf(e), s)
		if d.ScheduledAt != nil {
			keepEarliest(&j.ScheduledAt, *d.ScheduledAt)
		}
	case schema.TypeRunnerInterrupted:
		j.WasInterrupted = true
	}
	if d.UsageInSeconds != nil || d.UsageInDollars != nil {
		if j.Usage == nil {
			j.Usage = map[string]LWW[RunnerUsage]{}
		}
		r := j.Usage[d.InstanceID]
		r.Set(s, RunnerUsage{Seconds: d.UsageInSeconds, Dollars: d.UsageInDollars})
		j.Usage[d.InstanceID] = r
	}
}

// setStr writes a non-empty string into a register.
func setStr(r *LWW[string], s Stamp, v string) {
	if v != "" {
		r.Set(s, v)
	}
}

// usage sums the instances' usage in micro-seconds and micro-dollars: exact
// integers, so the map's order does not matter.
func (j *JobState) usage() (seconds, dollars int64, hasSeconds, hasDollars bool) {
	for _, r := range j.Usage {
		if r.V.Seconds != nil {
			seconds += Micros(*r.V.Seconds)
			hasSeconds = true
		}
		if r.V.Dollars != nil {
			dollars += Micros(*r.V.Dollars)
			hasDollars = true
		}
	}
	return
}

// Items returns the seed 003 workflow_jobs item (pk "<installation>#<job>",
// sk "v"). Unknown attributes are left out: a job known only from runner
// events has no created_at and so is in none of the GSIs yet.
func (j *JobState) Items() []Item {
	if j.JobID == 0 {
		return nil
	}
	created := j.created()
	it := schema.JobItem{
		PK:             schema.JobKey(j.InstallationID, j.JobID),
		SK:             "v",
		InstallationID: j.InstallationID,
		JobID:          j.JobID,
		WasInterrupted: j.WasInterrupted,
		RunID:          max(j.RunID, 0),
		RunAttempt:     max(j.RunAttempt, 0),
		OrgName:        lwwStr(j.OrgName),
		RepoFullName:   lwwStr(j.RepoFullName),
		RepoIsPrivate:  lwwPtr(j.RepoIsPrivate),
		WorkflowID:     lwwInt(j.WorkflowID),
		WorkflowName:   lwwStr(j.WorkflowName),
		JobName:        lwwStr(j.JobName),
		HeadSHA:        lwwStr(j.HeadSHA),
		HeadBranch:     lwwStr(j.HeadBranch),
		DefaultBranch:  lwwStr(j.DefaultBranch),
		JobHTMLURL:     lwwStr(j.HTMLURL),
		Status:         lwwStr(j.Status),
		Conclusion:     lwwStr(j.Conclusion),
		CreatedAt:      timeAttr(created),
		ReceivedAt:     timeAttr(j.ReceivedAt),
		ScheduledAt:    timeAttr(j.ScheduledAt),
		StartedAt:      timeAttr(j.StartedAt),

		InstanceID:        lwwStr(j.InstanceID),
		InstanceType:      lwwStr(j.InstanceType),
		InstanceLifecycle: lwwStr(j.InstanceLifecycle),
		FleetID:           lwwStr(j.FleetID),
		PoolName:          lwwStr(j.PoolName),
		RunnerID:          lwwInt(j.RunnerID),
		RunnerName:        lwwStr(j.RunnerName),
		RunnerGroupID:     lwwInt(j.RunnerGroupID),
		DeploymentID:      lwwInt(j.DeploymentID),
		LastUpdatedAt:     timeAttr(j.UpdatedAt),
	}
	if j.CompletedAt.Known() {
		it.CompletedAt = timeAttr(j.CompletedAt.V)
	}
	if j.Labels.Known() {
		it.Labels = append([]string{}, j.Labels.V...)
	}
	if secs, usd, hs, hd := j.usage(); hs || hd {
		if hs {
			it.UsageInSeconds = json.Number(NormalizeNumber(FormatScaled(secs, 6)))
		}
		if hd {
			it.UsageInDollars = json.Number(NormalizeNumber(FormatScaled(usd, 6)))
		}
	}
	if !j.StartedAt.IsZero() {
		if !j.ScheduledAt.IsZero() && !j.StartedAt.Before(j.ScheduledAt) {
			it.InternalQueueDurationInMs = ptr(j.StartedAt.Sub(j.ScheduledAt).Milliseconds())
		}
		if !created.IsZero() && !j.StartedAt.Before(created) {
			it.OverallQueueDurationInMs = ptr(j.StartedAt.Sub(created).Milliseconds())
		}
	}
	if ttl, ok := j.ttl(); ok {
		it.TTL = ttl
	}
	// Named in a run and in GSI3 (a webhook came: created_at is known):
	// the item is the job's share of its run.
	it.CountsInRun = j.RunID > 0 && j.RunAttempt > 0 && it.CreatedAt != ""
	items := []Item{itemOf(schema.TableWorkflowJobs, it)}
	for _, share := range j.runShares() {
		items = append(items, itemOf(schema.TableWorkflowRuns, share))
	}
	return items
}

// keepMaxOthers keeps the greatest positive v in *dst and every other
// positive value seen in *others, sorted: the set of values seen is a
// function of the events alone, whatever their order.
func keepMaxOthers(dst *int64, others *[]int64, v int64) {
	if v <= 0 || v == *dst {
		return
	}
	if v > *dst {
		v, *dst = *dst, v
		if v <= 0 {
			return
		}
	}
	if i, found := slices.BinarySearch(*others, v); !found {
		*others = slices.Insert(*others, i, v)
	}
}

// runShares are the run job items the job writes in workflow-runs: for
// every run key its events named other than its own (OtherRunIDs,
// OtherRunAttempts), an empty share (no counter, no attribute) that
// overwrites whatever share an older projector wrote there, so that the
// job never counts in two runs. Its share of its own run is its
// workflow-jobs item (Items, schema.JobShare). A job named in one run,
// every real job, writes none.
func (j *JobState) runShares() []schema.RunJobItem {
	if len(j.OtherRunIDs)+len(j.OtherRunAttempts) == 0 {
		return nil // every real job: Items runs twice per fold, allocate nothing
	}
	share, ok := j.runShare()
	if !ok {
		return nil
	}
	var out []schema.RunJobItem
	attempts := append([]int64{j.RunAttempt}, j.OtherRunAttempts...)
	for _, run := range append([]int64{j.RunID}, j.OtherRunIDs...) {
		for _, attempt := range attempts {
			if run == j.RunID && attempt == j.RunAttempt {
				continue
			}
			out = append(out, schema.RunJobItem{PK: schema.RunKey(j.InstallationID, run, attempt), SK: share.SK, JobID: j.JobID, TTL: share.TTL})
		}
	}
	return out
}

// created is the job's created_at, or its fallback for webhooks without
// one (CreatedFallback).
func (j *JobState) created() time.Time {
	if !j.CreatedAt.IsZero() {
		return j.CreatedAt
	}
	return j.CreatedFallback
}

// ttl is the job item's expiry: the retention after the latest recordedat
// of its events (UpdatedAt), so that whatever was appended stays visible
// for the retention period however old its event time. A state folded
// before UpdatedAt was kept counts from created_at, then the first event.
func (j *JobState) ttl() (int64, bool) {
	anchor := j.UpdatedAt
	for _, t := range []time.Time{j.CreatedAt, j.FirstAt} {
		if anchor.IsZero() {
			anchor = t
		}
	}
	if anchor.IsZero() {
		return 0, false
	}
	return ttlOf(schema.TableWorkflowJobs, anchor), true
}

// runShare is the job's share of its run's summary as a run job item
// (schema.RunJobItem, pk RunKey, sk RunJobSK), once an event named the
// run: its counters are schema.JobCounters of the job's status and
// conclusion, its attributes the run's own as the job knows them, its ttl
// the job's expiry rounded up to midnight (schema.RowTTL). It is what
// schema.JobShare reads from the job's workflow-jobs item once the item is
// in GSI3 (a webhook came); it is no longer written (runShares writes
// empty ones), but an older projector's summary row counted it
// (legacyContributions). The summary is the sum of the shares
// (schema.SummarizeRun), computed when read; no counter row is written,
// so a job's state commits alone, without a transaction.
func (j *JobState) runShare() (schema.RunJobItem, bool) {
	if j.RunID <= 0 || j.RunAttempt <= 0 {
		return schema.RunJobItem{}, false
	}
	r := schema.RunJobItem{
		PK: schema.RunKey(j.InstallationID, j.RunID, j.RunAttempt), SK: schema.RunJobSK(j.JobID), JobID: j.JobID,
		RunAttrs: schema.RunAttrs{InstallationID: j.InstallationID, RunID: j.RunID, RunAttempt: j.RunAttempt,
			RepoFullName: lwwStr(j.RepoFullName), WorkflowName: lwwStr(j.WorkflowName),
			HeadSHA: lwwStr(j.HeadSHA), HeadBranch: lwwStr(j.HeadBranch)},
		RunCounters: schema.JobCounters(lwwStr(j.Status), lwwStr(j.Conclusion)),
	}
	if ttl, ok := j.ttl(); ok {
		r.TTL = rowTTL(ttl)
	}
	return r, true
}

// Contributions: a job moves no counter row. Its share of its run's
// summary is an item (runShare); a state that still records a contribution
// to an older projector's summary row takes it back (rowDeltas), and
// schema.SummarizeRun adds what that row still counts.
func (j *JobState) Contributions() []Contribution { return nil }

// legacyContributions is what a projector before run job items applied to
// the run's summary row for this state: its counters, the same as its
// share's. Only a state stored without its applied contributions (before
// they were recorded) needs it, to take them back.
func (j *JobState) legacyContributions() []Contribution {
	r, ok := j.runShare()
	if !ok {
		return nil
	}
	return []Contribution{{
		Table: schema.TableWorkflowRuns,
		Key:   map[string]types.AttributeValue{"pk": avS(r.PK), "sk": avS(schema.RunSummarySK)},
		Counters: map[string]int64{"total_jobs": r.TotalJobs, "completed_jobs": r.CompletedJobs,
			"success_jobs": r.SuccessJobs, "failed_jobs": r.FailedJobs, "waiting_jobs": r.WaitingJobs},
	}}
}

// Deployment approval statuses: pending, then approved or rejected.
var deploymentStatuses = precedenceOf(KindDeployment)

// DeploymentState is the fold of one deployment's approval events
// (github/<installation>/deployment/<id>), the seed 003 deployments item.
type DeploymentState struct {
	InstallationID   int64       `json:"installationId"`
	DeploymentID     int64       `json:"deploymentId,omitempty"`
	RepoFullName     LWW[string] `json:"repoFullName,omitzero"`
	Environment      LWW[string] `json:"environment,omitzero"`
	RequiresApproval LWW[bool]   `json:"requiresApproval,omitzero"`
	Status           LWW[string] `json:"status,omitzero"`
	// PendingAt, ApprovedAt and RejectedAt are the earliest times of those
	// events; FirstAt the earliest event time.
	PendingAt  time.Time `json:"pendingAt,omitzero"`
	ApprovedAt time.Time `json:"approvedAt,omitzero"`
	RejectedAt time.Time `json:"rejectedAt,omitzero"`
	FirstAt    time.Time `json:"firstAt,omitzero"`
	// RecordedAt is the latest recordedat: ttl counts from it.
	RecordedAt time.Time `json:"recordedAt,omitzero"`
	// JobIDs is the union of the events' job_ids, sorted.
	JobIDs []int64 `json:"jobIds,omitempty"`
}

// Apply folds github.deployment.* events.
func (d *DeploymentState) Apply(e schema.Event, p schema.Payload) {
	v, ok := payloadOf(e, p).(*schema.DeploymentEvent)
	if !ok {
		return
	}
	s := StampOf(e)
	keepMax(&d.InstallationID, v.InstallationID)
	keepMax(&d.DeploymentID, v.DeploymentID)
	setStr(&d.RepoFullName, s, v.RepoFullName)
	setStr(&d.Environment, s, v.Environment)
	d.RequiresApproval.Set(s, v.RequiresApproval)
	deploymentStatuses.Offer(&d.Status, statusOf(e), s)
	switch e.Type {
	case schema.TypeDeploymentPending:
		keepEarliest(&d.PendingAt, e.Time)
	case schema.TypeDeploymentApproved:
		keepEarliest(&d.ApprovedAt, e.Time)
	case schema.TypeDeploymentRejected:
		keepEarliest(&d.RejectedAt, e.Time)
	}
	keepEarliest(&d.FirstAt, e.Time)
	keepLatest(&d.RecordedAt, recordedTime(e))
	for _, id := range v.JobIDs {
		if i, found := slices.BinarySearch(d.JobIDs, id); !found {
			d.JobIDs = slices.Insert(d.JobIDs, i, id)
		}
	}
}

// Items returns the deployments item (pk "<installation>#<deployment>", sk
// "v"). created_at is the pending event's time, or the first event's until
// that is known; ttl counts from the latest recordedat (from created_at in
// a state folded before that was kept).
func (d *DeploymentState) Items() []Item {
	if d.DeploymentID == 0 {
		return nil
	}
	created := d.PendingAt
	if created.IsZero() {
		created = d.FirstAt
	}
	it := schema.DeploymentItem{
		PK:               schema.DeploymentKey(d.InstallationID, d.DeploymentID),
		SK:               "v",
		InstallationID:   d.InstallationID,
		DeploymentID:     d.DeploymentID,
		RepoFullName:     lwwStr(d.RepoFullName),
		Environment:      lwwStr(d.Environment),
		Status:           lwwStr(d.Status),
		RequiresApproval: lwwPtr(d.RequiresApproval),
		CreatedAt:        timeAttr(created),
		ApprovedAt:       timeAttr(d.ApprovedAt),
		RejectedAt:       timeAttr(d.RejectedAt),
	}
	if len(d.JobIDs) > 0 {
		it.JobIDs = append([]int64{}, d.JobIDs...)
	}
	anchor := d.RecordedAt
	if anchor.IsZero() {
		anchor = created
	}
	if !anchor.IsZero() {
		it.TTL = ttlOf(schema.TableDeployments, anchor)
	}
	return []Item{itemOf(schema.TableDeployments, it)}
}

// Contributions: deployments feed no counter rows.
func (d *DeploymentState) Contributions() []Contribution { return nil }
