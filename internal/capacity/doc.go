// Package capacity measures what streamfold's DynamoDB calls cost: the read
// and write capacity units DynamoDB reports for them (ReturnConsumedCapacity),
// per table and secondary index, and what those units cost on demand.
//
// A Meter accumulates units; WithMeter is a DynamoDB client option that asks
// every call for its consumed capacity (INDEXES, or TOTAL where that is the
// only level an operation accepts) and adds the reply to a Meter:
//
//	m := capacity.NewMeter()
//	ddb := dynamodb.New(base.Options(), capacity.WithMeter(m))
//	... use ddb ...
//	snap := m.Snapshot().ForRecords(records)
//
// The units are DynamoDB's own figures, not an estimate: DynamoDB Local
// reports them with AWS's rules (1 write unit per started KB written, twice
// that inside a transaction; 1 read unit per started 4 KB read strongly
// consistently, half of that eventually consistently; index writes on top).
// On-demand tables are billed in request units that are counted the same way,
// so WriteUnits × WriteRequestUnitPrice + ReadUnits × ReadRequestUnitPrice is
// the bill for the calls measured.
//
// What a Meter cannot see: a call that fails (a ConditionalCheckFailed put, a
// cancelled transaction) carries no ConsumedCapacity in its error reply,
// although AWS does charge for failed conditional writes (the larger of the
// existing and the new item's size, at least 1 unit). Such calls are counted
// per operation as Failed, so a reader can see how many went unmeasured.
// Throttled calls are not charged by AWS and are not counted. DynamoDB Local
// (3.3.1) reports 0 units for a Query that finds nothing and for the keys of
// a BatchGetItem that find nothing, where AWS charges a minimum read; a
// GetItem of a missing item it charges as AWS does. DynamoDB Streams
// reads (GetRecords) have no consumed capacity: a Lambda event source mapping
// reads the stream at no charge.
//
// A Meter is safe for concurrent use; a Snapshot is a plain value.
package capacity
