package capacity

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Reads reports whether op is a DynamoDB read operation, whose units count
// as read units when a reply gives only CapacityUnits. Every other operation
// that reports capacity writes (PutItem, UpdateItem, DeleteItem,
// BatchWriteItem, TransactWriteItems: a ConditionCheck inside a transaction
// is billed as a write).
func Reads(op string) bool {
	switch op {
	case "GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems":
		return true
	}
	return false
}

// WithMeter is a DynamoDB client option that meters the client's calls into
// m: each call that can report consumed capacity and whose input leaves
// ReturnConsumedCapacity unset asks for it (INDEXES; TOTAL for
// TransactGetItems and ExecuteTransaction, which accept nothing finer), and
// the capacity in the reply is recorded under the operation's name. A caller
// that sets ReturnConsumedCapacity itself keeps its value (NONE meters
// nothing but the call). The caller's input is not modified. A call made
// with two WithMeter options (a metered client and a per-call option)
// records into both meters.
//
// Use it when building a client, dynamodb.New(opts, capacity.WithMeter(m)),
// or for one call, client.PutItem(ctx, in, capacity.WithMeter(m)).
func WithMeter(m *Meter) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			if prev, ok := s.Initialize.Get(meterID); ok {
				if p, ok := prev.(meterMiddleware); ok {
					_, err := s.Initialize.Swap(meterID, meterMiddleware{meters: append(p.meters[:len(p.meters):len(p.meters)], m)})
					return err
				}
			}
			return s.Initialize.Add(meterMiddleware{meters: []*Meter{m}}, middleware.Before)
		})
	}
}

const meterID = "streamfold/capacity.Meter"

type meterMiddleware struct{ meters []*Meter }

func (meterMiddleware) ID() string { return meterID }

func (mw meterMiddleware) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	op, write, metered := request(&in)
	out, md, err := next.HandleInitialize(ctx, in)
	if !metered {
		return out, md, err
	}
	ccs := consumed(out.Result)
	for _, m := range mw.meters {
		if err != nil {
			m.Failed(op)
		} else {
			m.record(op, write, ccs)
		}
	}
	return out, md, err
}

// request asks a copy of the input for consumed capacity and names its
// operation; metered is false for operations that cannot report capacity.
func request(in *middleware.InitializeInput) (op string, write, metered bool) {
	const (
		indexes = types.ReturnConsumedCapacityIndexes
		total   = types.ReturnConsumedCapacityTotal
	)
	switch v := in.Parameters.(type) {
	case *dynamodb.PutItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "PutItem"
	case *dynamodb.UpdateItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "UpdateItem"
	case *dynamodb.DeleteItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "DeleteItem"
	case *dynamodb.GetItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "GetItem"
	case *dynamodb.QueryInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "Query"
	case *dynamodb.ScanInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "Scan"
	case *dynamodb.BatchGetItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "BatchGetItem"
	case *dynamodb.BatchWriteItemInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "BatchWriteItem"
	case *dynamodb.TransactGetItemsInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, total)
		in.Parameters, op = &c, "TransactGetItems"
	case *dynamodb.TransactWriteItemsInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "TransactWriteItems"
	case *dynamodb.ExecuteStatementInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "ExecuteStatement"
		return op, !selects(v.Statement), true
	case *dynamodb.BatchExecuteStatementInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, indexes)
		in.Parameters, op = &c, "BatchExecuteStatement"
		w := false
		for _, s := range v.Statements {
			w = w || !selects(s.Statement)
		}
		return op, w, true
	case *dynamodb.ExecuteTransactionInput:
		c := *v
		c.ReturnConsumedCapacity = or(c.ReturnConsumedCapacity, total)
		in.Parameters, op = &c, "ExecuteTransaction"
		w := false
		for _, s := range v.TransactStatements {
			w = w || !selects(s.Statement)
		}
		return op, w, true
	default:
		return "", false, false
	}
	return op, !Reads(op), true
}

// selects reports whether a PartiQL statement is a SELECT (a read).
func selects(stmt *string) bool {
	if stmt == nil {
		return false
	}
	f := strings.Fields(*stmt)
	return len(f) > 0 && strings.EqualFold(f[0], "SELECT")
}

func or(set, def types.ReturnConsumedCapacity) types.ReturnConsumedCapacity {
	if set != "" {
		return set
	}
	return def
}

// consumed returns the consumed capacity of a reply.
func consumed(result any) []types.ConsumedCapacity {
	one := func(c *types.ConsumedCapacity) []types.ConsumedCapacity {
		if c == nil {
			return nil
		}
		return []types.ConsumedCapacity{*c}
	}
	switch v := result.(type) {
	case *dynamodb.PutItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.GetItemOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.ExecuteStatementOutput:
		return one(v.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return v.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		return v.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		return v.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		return v.ConsumedCapacity
	case *dynamodb.BatchExecuteStatementOutput:
		return v.ConsumedCapacity
	case *dynamodb.ExecuteTransactionOutput:
		return v.ConsumedCapacity
	}
	return nil
}
