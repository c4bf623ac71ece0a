// Package ingest is streamfold's producer side: everything that appends raw
// events to the event table.
//
//   - Appender validates events (schema.Validate) and writes each with a
//     conditional PutItem on its (subject, id) key. Appends are idempotent:
//     an event already in the table is reported as Duplicate and not written
//     again, so producers may retry freely. Writes run concurrently
//     (AppenderConfig.Concurrency); throttling and other transient errors are
//     retried with jittered exponential backoff. Outcomes are reported per
//     event, in input order. Events of one subject are written sequentially
//     in input order (so the stream shows them in that order); the order
//     between different subjects is unspecified, and consumers rely on
//     per-subject order only (see docs/event-contract.md).
//   - Emit and DecodeLine read NDJSON of envelopes, GitHub webhook deliveries
//     and native EventBridge Step Functions events (`streamfold emit`).
//   - WebhookHandler is the HTTP endpoint for GitHub webhooks: HMAC-SHA256
//     signature verification, body size limit, one event per delivery.
//   - StepFunctionsAdapter is the EventBridge target for Step Functions
//     status changes; it keeps only agent state machines (seed 002's tags,
//     looked up through a TagCache).
//
// Validation failures are *schema.ValidationError values that name the field;
// an event that can never be stored (its item above DynamoDB's 400 KB limit
// even compressed) is rejected with a *TooLargeError matching ErrTooLarge;
// write failures are *WriteError values.
package ingest
