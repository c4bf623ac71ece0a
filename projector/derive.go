package projector

import (
	"math/big"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// DeriveRow returns the attributes of a counter row that are functions of
// its counters and cannot be maintained by ADD: seed 001's averages on daily
// metrics rows (avgDurationMs = durationSumMs / durationCount,
// avgCostPerExecution = totalCost / executionCount) and seed 003's run
// status and conclusion (completed once every job of the run completed,
// failure if any failed; waiting while every job not completed waits for
// a deployment's approval; in_progress otherwise). It returns nil for rows
// with nothing to derive.
//
// The projector computes them in the same write that moves the counters
// (the row is written whole, compare-and-set on its version), so they are
// always consistent with the counters. A nil value means the attribute must
// be absent (it is removed).
func DeriveRow(table string, row map[string]types.AttributeValue) map[string]types.AttributeValue {
	num := func(k string) *big.Rat {
		r := new(big.Rat)
		if n, ok := row[k].(*types.AttributeValueMemberN); ok {
			r.SetString(n.Value)
		}
		return r
	}
	div := func(a, b *big.Rat, places int) types.AttributeValue {
		if b.Sign() == 0 {
			return &types.AttributeValueMemberN{Value: "0"}
		}
		return &types.AttributeValueMemberN{Value: NormalizeNumber(new(big.Rat).Quo(a, b).FloatString(places))}
	}
	switch table {
	case schema.TableWorkflows:
		if s, ok := row["entityType"].(*types.AttributeValueMemberS); !ok || s.Value != "metrics" {
			return nil
		}
		return map[string]types.AttributeValue{
			"avgDurationMs":       div(num("durationSumMs"), num("durationCount"), 0),
			"avgCostPerExecution": div(num("totalCost"), num("executionCount"), 6),
		}
	case schema.TableWorkflowRuns:
		total, completed, failed, waiting := num("total_jobs"), num("completed_jobs"), num("failed_jobs"), num("waiting_jobs")
		// conclusion is removed (nil) while the run is not complete: a run
		// that looked complete and then gained a job must not keep it.
		out := map[string]types.AttributeValue{"status": &types.AttributeValueMemberS{Value: "in_progress"}, "conclusion": nil}
		if open := new(big.Rat).Sub(total, completed); waiting.Sign() > 0 && open.Cmp(waiting) == 0 {
			// Every job not completed waits for a deployment's approval.
			out["status"] = &types.AttributeValueMemberS{Value: "waiting"}
		}
		if total.Sign() > 0 && total.Cmp(completed) == 0 {
			out["status"] = &types.AttributeValueMemberS{Value: "completed"}
			conclusion := "success"
			if failed.Sign() > 0 {
				conclusion = "failure"
			}
			out["conclusion"] = &types.AttributeValueMemberS{Value: conclusion}
		}
		return out
	}
	return nil
}

// ApplyDerived sets the attributes DeriveRow returned on row, removing those
// it returned as nil.
func ApplyDerived(row, derived map[string]types.AttributeValue) {
	for k, v := range derived {
		if v == nil {
			delete(row, k)
			continue
		}
		row[k] = v
	}
}
