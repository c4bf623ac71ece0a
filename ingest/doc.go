// Package ingest is streamfold's producer side: everything that appends raw
// events to the event table.
//
//   - Appender is the one writer every route goes through. It applies the
//     agent payload policy (ApplyPayloadPolicy), validates events
//     (schema.Validate), rejects an event dated more than MaxFutureSkew
//     (default 24 h) ahead of its recordedat (ErrTimeAhead, field "time"),
//     and writes each with its content hash (schema.ContentHash) by a
//     conditional PutItem on its (subject, id) key. Appends are idempotent:
//     an event already in the table with the same content is reported as
//     Duplicate and not written again, so producers may retry freely; with
//     other content it is a Conflict (ErrConflict), kept with both versions
//     in the dead letters (consumer "ingest", reason "conflict"). Writes run concurrently
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
//   - HTTPHandler serves every ingest route, the same code under `streamfold
//     serve` and behind the ingest Lambda's function URL: POST
//     /webhooks/github (WebhookHandler), POST /events (CloudEvents 1.0 over
//     HTTP in structured, binary and batched modes, DecodeCloudEvents, with
//     a bearer token) and POST /eventbridge (one EventBridge event through
//     StepFunctionsAdapter). It answers per event: accepted, duplicate,
//     rejected (naming the fields), too_large (413), conflict (409) or
//     failed (503, the only retryable one).
//   - StepFunctionsAdapter is the EventBridge target for Step Functions
//     status changes; it keeps only agent state machines (seed 002's tags,
//     looked up through a TagCache).
//
// Validation failures are *schema.ValidationError values that name the field
// (an event an item of which would break one of DynamoDB's limits among
// them, with a *schema.LimitError); a write DynamoDB refuses as invalid
// anyway is Rejected with a *RefusedError, never Failed;
// an event that can never be stored (its item above DynamoDB's 400 KB limit
// even compressed) is rejected with a *TooLargeError matching ErrTooLarge;
// write failures are *WriteError values.
package ingest
