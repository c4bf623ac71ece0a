// Package query is streamfold's read side: every access pattern of the
// seeds, answered from the projections (and, for a job's timeline and its
// duplicate webhooks, from the event log) with a GetItem, a BatchGetItem or a
// Query on a table key or an index. Nothing here ever scans a table.
//
// # Results
//
// Items are returned in plain JSON form (Plain): strings, json.Number for
// DynamoDB numbers (their exact text), booleans, nulls, lists and maps, so
// that encoding/json renders them as the seeds show them.
//
// List patterns return a Page: at most Limit items (default
// Config.DefaultPageSize, at most Config.MaxPageSize) and Next, an opaque
// cursor for the following page, "" at the end. Ordering:
//
//   - date-ranged lists (executions by agent or status, messages by stage,
//     status or type, jobs by status or repository, running executions,
//     pending tasks, metrics rows of a workflow type) come newest first, by
//     the index's date sort key;
//   - running executions and pending tasks without a workflow type list
//     step-functions first, then durable-functions, each newest first;
//   - the jobs of a run come in created_at order, a job's timeline in event
//     time order (ties by recordedat, then id).
//
// A page may hold fewer items than the limit, even none, while Next is not
// empty: when a filter applies (messages filtered by a second attribute) or
// when one page stopped after Config.MaxRequestsPerPage requests. Follow
// Next until it is "". The number of DynamoDB requests per page is bounded
// by a constant and does not grow with the table.
//
// # Cursors
//
// A cursor is base64url text holding the DynamoDB LastEvaluatedKey, the
// phase of a multi-partition query and a fingerprint of the query (pattern
// and parameters), authenticated with HMAC-SHA256 under Config.CursorKey. A
// cursor that was modified, truncated, signed with another key or issued for
// another query fails with an error wrapping ErrBadCursor; it is never sent
// to DynamoDB as a key. Cursors do not expire; a cursor stays valid while
// the key does.
//
// # Errors
//
// ErrNotFound: a single-item lookup found nothing. ErrInvalid: a parameter
// is wrong; the error is a *ParamError naming it. ErrBadCursor: see above.
// Anything else is a DynamoDB failure, wrapped with the pattern's name.
//
// # Concurrency and consistency
//
// A Client is safe for concurrent use. Index queries are eventually
// consistent (DynamoDB GSIs always are); GetItem reads are too, as a
// dashboard does not need strong consistency (seed 004).
package query
