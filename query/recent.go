package query

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/schema"
)

// RecentExecutions lists the executions of every agent and status started
// in r, newest first (ties by executionArn, descending): what the
// dashboard shows before anyone chose an agent or a status. No index
// holds every execution in one partition, so it reads StatusDateIndex
// once per status of ExecutionStatuses (one partition each; N shards each
// on a sharded index) and merges them by startDate, as a sharded index's
// shards are merged: one page costs at most one Query per status and
// shard per round (each asking for the page's remaining items), never a
// Scan. Its cursor holds each partition's resume key.
func (c *Client) RecentExecutions(ctx context.Context, r TimeRange, p PageRequest) (Page, error) {
	q, err := c.recentExecutions(r)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "recent executions", q, p)
}

func (c *Client) recentExecutions(r TimeRange) (paged, error) {
	if err := r.validate(); err != nil {
		return paged{}, err
	}
	const seedIndex = "StatusDateIndex"
	index, sharded := schema.IndexFor(schema.TableExecutions, seedIndex, c.cfg.GSIShards)
	q := paged{
		fp:       fingerprint{"recent-executions", r.params()},
		keyAttrs: keyAttrs(schema.TableExecutions, seedIndex),
		order:    []string{"startDate", "executionArn"},
	}
	if sharded {
		c.shard(&q, schema.TableExecutions, seedIndex) // fingerprint, key attributes and order of the sharded index
	}
	for _, status := range ExecutionStatuses {
		k := newCond().eq("status", avS(status))
		r.on(k, "startDate")
		in := c.queryInput(schema.TableExecutions, index, k, nil, false)
		if !sharded {
			q.lanes = append(q.lanes, in)
			continue
		}
		for s := range c.cfg.GSIShards {
			q.lanes = append(q.lanes, shardInput(in, s))
		}
	}
	q.phases = []*dynamodb.QueryInput{q.lanes[0]}
	q.shards = len(q.lanes)
	return q, nil
}
