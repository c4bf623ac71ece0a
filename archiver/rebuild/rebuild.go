package rebuild

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// Rebuild folds every event of src into target through a
// projector.Projector: aggregate states, projection items, counter rows and
// their derived attributes, exactly as the stream projector builds them.
// Target is normally a projector.DynamoStore on the fresh tables prepared by
// PrepareFresh, or on the live tables (in place).
//
// It is idempotent: over the same archive a second call changes nothing
// (Stats.Changed == 0, no commits). It is safe while other writers (the
// stream projector) write the same tables: commits are version-checked and
// conflicting subjects are retried. When some subjects are still failing
// after Options.Rounds it returns the Stats with an *IncompleteError; the
// rest is committed and a second call retries the failures.
func Rebuild(ctx context.Context, src Source, target projector.Store, opts Options) (Stats, error) {
	return foldArchive(ctx, src, target, opts)
}

// TargetAPI is the part of the DynamoDB client PrepareFresh uses.
type TargetAPI interface {
	provision.API
	ddbapi.Scan
}

// FreshTables are the logical tables PrepareFresh requires to be empty: the
// event table, the aggregate states and every projection table. Dead
// letters and checkpoints are bookkeeping of a consumer, not projections.
var FreshTables = append([]string{schema.TableEvents, schema.TableAggregates}, schema.ProjectionTables()...)

// PrepareFresh creates every table of target that does not exist yet
// (provision.Ensure) and checks that FreshTables hold no item. When one
// does and force is off it returns a *NotEmptyError (ErrTargetNotEmpty)
// naming them; with force it goes on (the rebuild then joins the archive
// into whatever the tables hold, as in place).
func PrepareFresh(ctx context.Context, api TargetAPI, target schema.Naming, force bool) ([]provision.Result, error) {
	res, err := provision.Ensure(ctx, api, target)
	if err != nil {
		return res, err
	}
	if force {
		return res, nil
	}
	var full []string
	for _, logical := range FreshTables {
		name := target.Table(logical)
		out, err := api.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(name), Limit: aws.Int32(1), Select: types.SelectCount})
		if err != nil {
			var nf *types.ResourceNotFoundException
			if errors.As(err, &nf) {
				continue
			}
			return res, fmt.Errorf("rebuild: check %s is empty: %w", name, err)
		}
		if out.Count > 0 || out.LastEvaluatedKey != nil {
			full = append(full, name)
		}
	}
	if len(full) > 0 {
		return res, &NotEmptyError{Tables: full}
	}
	return res, nil
}
