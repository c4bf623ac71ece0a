package projector

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// JobFold is the fold of one job (KindJob) on its own, for readers that show
// what each of a job's events changed in its workflow_jobs item: query's
// Timeline takes it through query.Config.JobFold, so that query needs no
// import of the projector. It is the projector's own fold, not a copy.
type JobFold struct {
	agg Aggregate
}

// NewJobFold returns the fold of a job before any event.
func NewJobFold() *JobFold { return &JobFold{agg: NewAggregate(KindJob)} }

// Apply folds one validated event of the job's subject.
func (f *JobFold) Apply(e schema.Event, p schema.Payload) { f.agg.Apply(e, p) }

// Item is the job's workflow_jobs item after the events applied so far, as
// the projector would put it; nil while they imply none (no job id yet).
func (f *JobFold) Item() map[string]types.AttributeValue {
	for _, it := range f.agg.Items() {
		if it.Table == schema.TableWorkflowJobs {
			return it.Item
		}
	}
	return nil
}
