// Package streamimage is the single conversion boundary between the three
// representations of DynamoDB attribute values that streamfold meets:
//
//   - [events.DynamoDBAttributeValue] from github.com/aws/aws-lambda-go, carried
//     by a Lambda DynamoDB Streams event;
//   - the dynamodbstreams types.AttributeValue union (called streamtypes here),
//     returned by the DynamoDB Streams GetRecords API;
//   - the dynamodb types.AttributeValue union, used by the rest of streamfold.
//
// It also turns a GetRecords record into the [events.DynamoDBEventRecord] that
// Lambda's event source mapping would deliver ([LambdaRecord]), so that a local
// stream runner can feed exactly the same handler code as Lambda.
//
// # Contract
//
//   - Lossless round trips: every DynamoDB type (S, N, B, BOOL, NULL, M, L, SS,
//     NS, BS) is supported, and converting a value to another representation
//     and back yields a deeply equal value, including nil versus empty slices
//     and maps, empty sets and set element order. The one exception is a NULL
//     member whose Value is false, which DynamoDB never produces and Lambda
//     cannot represent; [ToLambda] rejects it with [ErrInvalidNull].
//   - Numbers are kept as text. They are never parsed, so "1e400" or
//     "-0.000001" come out exactly as they went in.
//   - No panics, for any input: nil maps, nil interface values, typed nil
//     members, unknown union members, the zero events.DynamoDBAttributeValue and
//     arbitrarily deep nesting all produce an error instead. (The accessors of
//     events.DynamoDBAttributeValue panic when called for the wrong type; this
//     package only calls them after checking DataType.)
//   - Errors name the attribute path. A failure inside a value is reported as a
//     [*PathError] whose Path looks like `data.items[2]` and whose Err is one of
//     the sentinel errors [ErrUnsupportedType], [ErrNilValue], [ErrTooDeep] or
//     [ErrInvalidNull]; use errors.Is and errors.As to inspect it.
//   - Values nested deeper than [MaxDepth] levels (DynamoDB's own limit,
//     counting a top-level attribute as level 1) are rejected with [ErrTooDeep].
//
// Conversions copy byte slices, string slices, lists and maps: the result
// never aliases the input. A nil input map converts to a nil map.
package streamimage
