package schema

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A run's summary (seed 003's workflow_runs item) is not stored as one row
// that every job event rewrites. It is summed when read (SummarizeRun) from
// its jobs' shares: a job's share is its workflow-jobs item itself, read
// from GSI3 (the seed's "check if workflow run complete" query), when the
// item is marked AttrCountsInRun; otherwise (items older projectors wrote,
// and jobs not in GSI3 for want of a created_at) a RunJobItem in the run's
// partition of workflow-runs (pk RunKey, sk RunJobSK(job)). Projectors
// before either kept one summary row per run; SummarizeRun still adds what
// it counts. docs/decisions.md, "Run summaries summed on read", says why.

// RunSummarySK is the sort key of a run's summary, and of the one summary
// row per run that projectors before run job items wrote (its counters
// still count the jobs not projected since; SummarizeRun adds them).
const RunSummarySK = "v"

// runJobSKPrefix starts the sort key of a run job item.
const runJobSKPrefix = "job#"

// RunJobSK is the sort key of a job's share of its run's summary:
// "job#<job id>".
func RunJobSK(job int64) string { return runJobSKPrefix + strconv.FormatInt(job, 10) }

// RunJobItem is one job's share of its run's summary, owned by the job:
// its counters are 0 or 1 (TotalJobs always 1), its attributes are the
// run's own as the job knows them (an installation id of 0, GHES's, is
// absent), and its ttl is the job's expiry rounded up to the next UTC
// midnight, so that the partition expires with the last of its jobs.
type RunJobItem struct {
	PK    string `dynamodbav:"pk" json:"pk"`
	SK    string `dynamodbav:"sk" json:"sk"`
	JobID int64  `dynamodbav:"job_id" json:"job_id"`
	RunAttrs
	RunCounters
	TTL int64 `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
}

// runCounters are the counters a summary sums, in RunItem's order.
var runCounters = []string{"total_jobs", "completed_jobs", "success_jobs", "failed_jobs", "waiting_jobs"}

// runAttrs are the run's own attributes a summary takes from its jobs.
var runAttrs = []string{"repo_full_name", "workflow_name", "head_sha", "head_branch"}

// SummarizeRun returns the summary (a RunItem, sk RunSummarySK) of one
// run from the items of its partition of workflow-runs (RunJobItems and
// the summary row of an older projector, if any) and its jobs' items
// (workflow-jobs items, from GSI3). A job item counts when it is marked
// AttrCountsInRun (JobShare), and then in place of any RunJobItem of the
// same job; unmarked job items are left out (their run counts them from a
// RunJobItem or the older row). Counters are summed; each of the run's own
// attributes is the value of the job with the greatest id that has it
// (GitHub numbers jobs in creation order, so: the latest job's), else the
// older row's; ttl is the greatest; status and conclusion are derived from
// the counters as seed 003 defines them (DeriveRunStatus). A counter that
// sums to 0 is absent. It returns nil when no job counts (no items, or an
// older row whose jobs have all moved to their own items).
//
// It is a pure function of the two sets of items: their order does not
// matter.
func SummarizeRun(partition, jobs []map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	shares, err := jobShares(jobs)
	if err != nil {
		return nil, err
	}
	return sumRun(withShares(partition, shares))
}

// sumRun sums the shares and rows of one run (SummarizeRun).
func sumRun(items []map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	var sum RunItem
	counts := make(map[string]int64, len(runCounters))
	attrJob := map[string]int64{} // the job id an attribute was taken from; -1: the older row
	attrs := map[string]string{}
	for _, it := range items {
		pk, sk := strAttrOf(it, "pk"), strAttrOf(it, "sk")
		if sum.PK == "" {
			sum.PK = pk
		} else if pk != sum.PK {
			return nil, fmt.Errorf("schema: run summary of %s: item of another run %q", sum.PK, pk)
		}
		job := int64(-1)
		if id, ok := strings.CutPrefix(sk, runJobSKPrefix); ok {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("schema: run summary of %s: sort key %q: %w", pk, sk, err)
			}
			job = n
		} else if sk != RunSummarySK {
			return nil, fmt.Errorf("schema: run summary of %s: unknown sort key %q", pk, sk)
		}
		for _, name := range runCounters {
			n, err := intAttr(it, name)
			if err != nil {
				return nil, fmt.Errorf("schema: run summary of %s, item %s: %w", pk, sk, err)
			}
			counts[name] += n
		}
		for name, dst := range map[string]*int64{"installation_id": &sum.InstallationID, "run_id": &sum.RunID, "run_attempt": &sum.RunAttempt} {
			if n, err := intAttr(it, name); err == nil && n > 0 {
				*dst = n
			}
		}
		for _, name := range runAttrs {
			v := strAttrOf(it, name)
			if from, have := attrJob[name]; v == "" || have && from > job {
				continue
			}
			attrs[name], attrJob[name] = v, job
		}
		if ttl, ok := TTLOf(it); ok && ttl > sum.TTL {
			sum.TTL = ttl
		}
	}
	if counts["total_jobs"] <= 0 {
		return nil, nil
	}
	sum.SK = RunSummarySK
	sum.RepoFullName, sum.WorkflowName = attrs["repo_full_name"], attrs["workflow_name"]
	sum.HeadSHA, sum.HeadBranch = attrs["head_sha"], attrs["head_branch"]
	sum.TotalJobs, sum.CompletedJobs, sum.SuccessJobs = counts["total_jobs"], counts["completed_jobs"], counts["success_jobs"]
	sum.FailedJobs, sum.WaitingJobs = counts["failed_jobs"], counts["waiting_jobs"]
	sum.Status, sum.Conclusion = DeriveRunStatus(sum.TotalJobs, sum.CompletedJobs, sum.FailedJobs, sum.WaitingJobs)
	out, err := attributevalue.MarshalMap(sum)
	if err != nil {
		return nil, err
	}
	// The run's ids are always present, 0 included (GHES installation 0).
	for name, v := range map[string]int64{"installation_id": sum.InstallationID, "run_id": sum.RunID, "run_attempt": sum.RunAttempt} {
		out[name] = &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	return out, nil
}

// SummarizeRuns groups the items of the workflow-runs table (partition)
// and of the workflow-jobs table (jobs) by run and returns each run's
// summary (SummarizeRun), ordered by pk; runs whose jobs all sum to
// nothing are left out. Unmarked job items are ignored.
func SummarizeRuns(partition, jobs []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	byRun := map[string][]map[string]types.AttributeValue{}
	for _, it := range partition {
		pk := strAttrOf(it, "pk")
		byRun[pk] = append(byRun[pk], it)
	}
	shares, err := jobShares(jobs)
	if err != nil {
		return nil, err
	}
	sharesOf := map[string][]map[string]types.AttributeValue{}
	for _, share := range shares {
		pk := strAttrOf(share, "pk")
		sharesOf[pk] = append(sharesOf[pk], share)
		if byRun[pk] == nil {
			byRun[pk] = []map[string]types.AttributeValue{}
		}
	}
	keys := make([]string, 0, len(byRun))
	for k := range byRun {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []map[string]types.AttributeValue
	for _, k := range keys {
		s, err := sumRun(withShares(byRun[k], sharesOf[k]))
		if err != nil {
			return nil, err
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// JobShare returns the share of its run (a RunJobItem's attributes: pk
// RunKey, sk RunJobSK, the 0/1 counters, the run's attributes, the ttl
// rounded up to midnight by RowTTL) that a workflow-jobs item marked
// AttrCountsInRun stands for; ok is false for an unmarked item.
func JobShare(job map[string]types.AttributeValue) (share map[string]types.AttributeValue, ok bool, err error) {
	if b, isB := job[AttrCountsInRun].(*types.AttributeValueMemberBOOL); !isB || !b.Value {
		return nil, false, nil
	}
	var it JobItem
	if err := attributevalue.UnmarshalMap(job, &it); err != nil {
		return nil, false, fmt.Errorf("schema: job item %s as its run's share: %w", strAttrOf(job, "pk"), err)
	}
	if it.JobID <= 0 || it.RunID <= 0 || it.RunAttempt <= 0 {
		return nil, false, fmt.Errorf("schema: job item %s counts in its run but names no job, run or attempt", strAttrOf(job, "pk"))
	}
	r := RunJobItem{
		PK: RunKey(it.InstallationID, it.RunID, it.RunAttempt), SK: RunJobSK(it.JobID), JobID: it.JobID,
		RunAttrs: RunAttrs{InstallationID: it.InstallationID, RunID: it.RunID, RunAttempt: it.RunAttempt,
			RepoFullName: it.RepoFullName, WorkflowName: it.WorkflowName, HeadSHA: it.HeadSHA, HeadBranch: it.HeadBranch},
		RunCounters: JobCounters(it.Status, it.Conclusion),
	}
	if it.TTL > 0 {
		r.TTL = RowTTL(it.TTL)
	}
	out, err := attributevalue.MarshalMap(r)
	return out, err == nil, err
}

// JobCounters are the 0/1 run counters of a job of status and conclusion:
// total_jobs 1, waiting_jobs while it waits for a deployment's approval,
// completed_jobs once completed, and then failed_jobs for the conclusions
// FailedConclusions, success_jobs for success.
func JobCounters(status, conclusion string) RunCounters {
	c := RunCounters{TotalJobs: 1}
	switch status {
	case "waiting":
		c.WaitingJobs = 1
	case "completed":
		c.CompletedJobs = 1
		switch {
		case slices.Contains(failedConclusions, conclusion):
			c.FailedJobs = 1
		case conclusion == "success":
			c.SuccessJobs = 1
		}
	}
	return c
}

// RowTTL rounds an item's expiry up to the next UTC midnight: the expiry of
// a row or share that should outlive the item by less than a day but not
// be rewritten more than once a day for it.
func RowTTL(itemTTL int64) int64 {
	const day = 86400
	return (itemTTL + day - 1) / day * day
}

// jobShares are the shares the marked job items among jobs stand for
// (JobShare), each converted once.
func jobShares(jobs []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var shares []map[string]types.AttributeValue
	for _, j := range jobs {
		share, ok, err := JobShare(j)
		if err != nil {
			return nil, err
		}
		if ok {
			shares = append(shares, share)
		}
	}
	return shares, nil
}

// withShares returns partition with shares added, each in place of a
// RunJobItem of the same job.
func withShares(partition, shares []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	if len(shares) == 0 {
		return partition
	}
	bySK := make(map[string]bool, len(shares))
	for _, share := range shares {
		bySK[strAttrOf(share, "sk")] = true
	}
	out := slices.Clip(shares)
	for _, it := range partition {
		if !bySK[strAttrOf(it, "sk")] {
			out = append(out, it)
		}
	}
	return out
}

// DeriveRunStatus is seed 003's run status and conclusion from its job
// counters: completed (conclusion failure if a job failed, else success)
// once every job completed; waiting while every job not completed waits
// for a deployment's approval; else in_progress (no conclusion).
func DeriveRunStatus(total, completed, failed, waiting int64) (status, conclusion string) {
	switch {
	case total > 0 && total == completed:
		if failed > 0 {
			return "completed", "failure"
		}
		return "completed", "success"
	case waiting > 0 && total-completed == waiting:
		return "waiting", ""
	}
	return "in_progress", ""
}

func strAttrOf(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// intAttr reads a whole number attribute (0 when absent). An older summary
// row's counters were written as exact decimals of scale 0.
func intAttr(item map[string]types.AttributeValue, name string) (int64, error) {
	v, ok := item[name]
	if !ok {
		return 0, nil
	}
	n, isN := v.(*types.AttributeValueMemberN)
	if !isN {
		return 0, fmt.Errorf("%s is not a number", name)
	}
	if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		return i, nil
	}
	r, ok := new(big.Rat).SetString(n.Value)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s holds %q, not a whole number", name, n.Value)
	}
	return r.Num().Int64(), nil
}
