package query

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// ExecutionStatuses are the statuses of seed 002's execution index.
var ExecutionStatuses = []string{schema.ExecutionRunning, schema.ExecutionSucceeded, schema.ExecutionFailed, schema.ExecutionTimedOut, schema.ExecutionAborted}

// Execution returns one agent execution by ARN (seed 000: the table's key).
func (c *Client) Execution(ctx context.Context, arn string) (map[string]any, error) {
	if err := required("arn", arn); err != nil {
		return nil, err
	}
	return c.get(ctx, "execution "+arn, schema.TableExecutions, map[string]types.AttributeValue{"executionArn": avS(arn)})
}

// ExecutionsByAgent lists an agent's executions started in r, newest first
// (seed 000's AgentDateIndex: agentName = A AND startDate BETWEEN from AND to).
func (c *Client) ExecutionsByAgent(ctx context.Context, agent string, r TimeRange, p PageRequest) (Page, error) {
	q, err := c.executionsByAgent(agent, r)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "executions by agent", q, p)
}

func (c *Client) executionsByAgent(agent string, r TimeRange) (paged, error) {
	if err := required("agent", agent); err != nil {
		return paged{}, err
	}
	return c.executionsOn("executions-by-agent", "AgentDateIndex", "agentName", "agent", agent, r)
}

// executionsOn is the query of the executions whose attr is value, started
// in r, on index (keyed by attr and startDate); pattern and param name it
// in the cursor's fingerprint.
func (c *Client) executionsOn(pattern, index, attr, param, value string, r TimeRange) (paged, error) {
	if err := r.validate(); err != nil {
		return paged{}, err
	}
	k := newCond().eq(attr, avS(value))
	r.on(k, "startDate")
	q := paged{
		fp:       fingerprint{pattern, append([]string{param + "=" + value}, r.params()...)},
		phases:   []*dynamodb.QueryInput{c.queryInput(schema.TableExecutions, c.indexFor(schema.TableExecutions, index), k, nil, false)},
		keyAttrs: keyAttrs(schema.TableExecutions, index),
	}
	c.shard(&q, schema.TableExecutions, index)
	return q, nil
}

// ExecutionsByStatus lists the executions of a status started in r, newest
// first (seed 000's StatusDateIndex). Status is RUNNING, SUCCEEDED, FAILED,
// TIMED_OUT or ABORTED, in any case.
func (c *Client) ExecutionsByStatus(ctx context.Context, status string, r TimeRange, p PageRequest) (Page, error) {
	q, err := c.executionsByStatus(status, r)
	if err != nil {
		return Page{}, err
	}
	return c.run(ctx, "executions by status", q, p)
}

func (c *Client) executionsByStatus(status string, r TimeRange) (paged, error) {
	status = strings.ToUpper(status)
	if err := required("status", status); err != nil {
		return paged{}, err
	}
	if err := oneOf("status", status, ExecutionStatuses...); err != nil {
		return paged{}, err
	}
	return c.executionsOn("executions-by-status", "StatusDateIndex", "status", "status", status, r)
}
