package seed003

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// API is the part of the DynamoDB client Writer uses.
type API interface {
	ddbapi.GetItem
	ddbapi.PutItem
	ddbapi.UpdateItem
}

// ErrNotJobDomain is returned by Apply for an event seed 003 does not
// handle (another domain's).
var ErrNotJobDomain = errors.New("seed003: not a GitHub job, runner or deployment event")

// Writer applies events to seed 003's tables as the seed prescribes (see
// the package comment).
type Writer struct {
	api    API
	tables Tables
	// jobs and deployments are the last state written of each item: the
	// scheduler's memory of its runners, read by runner events, which the
	// seed handles without a GetItem; and the deployments' state.
	jobs, deployments map[string]Item
}

// NewWriter returns a Writer on the tables.
func NewWriter(api API, tables Tables) *Writer {
	return &Writer{api: api, tables: tables, jobs: map[string]Item{}, deployments: map[string]Item{}}
}

// Apply handles one event received at received.
func (w *Writer) Apply(ctx context.Context, e schema.Event, received time.Time) error {
	p, err := schema.Decode(e)
	if err != nil {
		return fmt.Errorf("seed003: %s %s: %w", e.Type, e.ID, err)
	}
	switch p := p.(type) {
	case *schema.WorkflowJobWebhook:
		key := jobKey(p.InstallationID(), p.WorkflowJob.ID)
		out, err := w.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(w.tables.Jobs), Key: key})
		if err != nil {
			return fmt.Errorf("seed003: get job %s: %w", p.Subject(), err)
		}
		prev := out.Item
		if len(prev) == 0 {
			prev = nil
		}
		next := foldWebhook(prev, p, e.Data, received)
		return w.job(ctx, key, prev, next, e, p.Action, "github_webhook", received, p)
	case *schema.RunnerEvent:
		key := jobKey(p.InstallationID, p.JobID)
		prev := w.jobs[str(key, attrPK)]
		next := foldRunner(prev, e.Type, p, received)
		return w.job(ctx, key, prev, next, e, "", "internal", received, nil)
	case *schema.DeploymentEvent:
		return w.deployment(ctx, e, p, received)
	}
	return fmt.Errorf("%w: %s", ErrNotJobDomain, e.Type)
}

func jobKey(inst, job int64) Item {
	return Item{attrPK: avS(schema.JobKey(inst, job)), attrSK: avS("v")}
}

// job writes the job's new state, its event row and its run's counters.
func (w *Writer) job(ctx context.Context, key, prev, next Item, e schema.Event, action, source string, received time.Time, wh *schema.WorkflowJobWebhook) error {
	if err := w.write(ctx, w.tables.Jobs, key, prev, next, true); err != nil {
		return err
	}
	w.jobs[str(key, attrPK)] = next
	row := eventRow(prev, next, eventType(e.Type), action, source, e.Time, received)
	if _, err := w.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(w.tables.JobEvents), Item: row}); err != nil {
		return fmt.Errorf("seed003: put event row of %s: %w", str(key, attrPK), err)
	}
	if wh == nil {
		return nil
	}
	if in := runUpdate(w.tables.Runs, wh, next, runCounters(prev, next), received); in != nil {
		if _, err := w.api.UpdateItem(ctx, in); err != nil {
			return fmt.Errorf("seed003: update run of %s: %w", str(key, attrPK), err)
		}
	}
	return nil
}

// write puts next when prev is nil (conditional on absence when
// conditional), else updates what changed.
func (w *Writer) write(ctx context.Context, table string, key, prev, next Item, conditional bool) error {
	if prev == nil {
		in := &dynamodb.PutItemInput{TableName: aws.String(table), Item: next}
		if conditional {
			in.ConditionExpression = aws.String("attribute_not_exists(" + attrPK + ")")
		}
		if _, err := w.api.PutItem(ctx, in); err != nil {
			return fmt.Errorf("seed003: put %s %s: %w", table, str(key, attrPK), err)
		}
		return nil
	}
	if in := updateInput(table, key, prev, next); in != nil {
		if _, err := w.api.UpdateItem(ctx, in); err != nil {
			return fmt.Errorf("seed003: update %s %s: %w", table, str(key, attrPK), err)
		}
	}
	return nil
}

// runUpdate builds the workflow_runs counter update (nil when no counter
// moves): the run's attributes set if absent, updated_at, the counters
// added.
func runUpdate(table string, p *schema.WorkflowJobWebhook, job Item, counters map[string]int64, received time.Time) *dynamodb.UpdateItemInput {
	if len(counters) == 0 {
		return nil
	}
	j := p.WorkflowJob
	inst := p.InstallationID()
	static := Item{
		"installation_id": avN(inst),
		"run_id":          avN(j.RunID),
		"run_attempt":     avN(int64(j.RunAttempt)),
		"repo_full_name":  avS(p.Repository.FullName),
		"run_html_url":    avS("https://github.com/" + p.Repository.FullName + "/actions/runs/" + strconv.FormatInt(j.RunID, 10)),
		attrTTL:           avN(received.Add(jobTTL).Unix()),
	}
	setS(static, "workflow_name", j.WorkflowName)
	setS(static, "head_sha", j.HeadSHA)
	setS(static, "head_branch", j.HeadBranch)
	if c, ok := job[attrCreated]; ok {
		static[attrCreated] = c
	}
	names := map[string]string{}
	values := Item{}
	var set, add []string
	for i, name := range slices.Sorted(maps.Keys(static)) {
		n, v := "#s"+strconv.Itoa(i), ":s"+strconv.Itoa(i)
		names[n], values[v] = name, static[name]
		set = append(set, n+" = if_not_exists("+n+", "+v+")")
	}
	names["#u"], values[":u"] = "updated_at", avS(isoTime(received))
	set = append(set, "#u = :u")
	for i, name := range slices.Sorted(maps.Keys(counters)) {
		n, v := "#a"+strconv.Itoa(i), ":a"+strconv.Itoa(i)
		names[n], values[v] = name, avN(counters[name])
		add = append(add, n+" "+v)
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       Item{attrPK: avS(schema.RunKey(inst, j.RunID, int64(j.RunAttempt))), attrSK: avS("v")},
		UpdateExpression:          aws.String("SET " + strings.Join(set, ", ") + " ADD " + strings.Join(add, ", ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// deployment writes a deployment's new state: PutItem when it is new,
// else UpdateItem of what changed.
func (w *Writer) deployment(ctx context.Context, e schema.Event, p *schema.DeploymentEvent, received time.Time) error {
	key := Item{attrPK: avS(schema.DeploymentKey(p.InstallationID, p.DeploymentID)), attrSK: avS("v")}
	prev := w.deployments[str(key, attrPK)]
	next := foldDeployment(prev, e.Type, p, e.Time, received)
	if err := w.write(ctx, w.tables.Deployments, key, prev, next, false); err != nil {
		return err
	}
	w.deployments[str(key, attrPK)] = next
	return nil
}

// foldDeployment returns the deployments item after a deployment event.
func foldDeployment(prev Item, eventType string, p *schema.DeploymentEvent, at, received time.Time) Item {
	next := maps.Clone(prev)
	if next == nil {
		next = Item{attrTTL: avN(received.Add(jobTTL).Unix())}
	}
	next[attrPK] = avS(schema.DeploymentKey(p.InstallationID, p.DeploymentID))
	next[attrSK] = avS("v")
	next["installation_id"] = avN(p.InstallationID)
	next["deployment_id"] = avN(p.DeploymentID)
	next["repo_full_name"] = avS(p.RepoFullName)
	next["environment"] = avS(p.Environment)
	next["requires_approval"] = avBool(p.RequiresApproval)
	if _, ok := next[attrCreated]; !ok {
		next[attrCreated] = avS(isoTime(at))
	}
	switch eventType {
	case schema.TypeDeploymentPending:
		if _, ok := next["status"]; !ok {
			next["status"] = avS("pending")
		}
	case schema.TypeDeploymentApproved:
		next["status"] = avS("approved")
		next["approved_at"] = avS(isoTime(at))
	case schema.TypeDeploymentRejected:
		next["status"] = avS("rejected")
		next["rejected_at"] = avS(isoTime(at))
	}
	if len(p.JobIDs) > 0 {
		l := make([]types.AttributeValue, len(p.JobIDs))
		for i, id := range p.JobIDs {
			l[i] = avN(id)
		}
		next["job_ids"] = &types.AttributeValueMemberL{Value: l}
	}
	return next
}
