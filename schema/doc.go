// Package schema is streamfold's single source of truth: the event envelope that
// producers append, the typed payload of every event type, the validation rules
// those payloads obey, and the specifications of every DynamoDB table.
//
// # Envelope
//
// An Event uses CloudEvents 1.0 attribute names: id, source, type, subject,
// time and data, plus the extension recordedat that the writer sets. Subject
// names the aggregate (a job, an execution, a message) the event belongs to and
// is derived from the payload, so that two producers cannot disagree on it.
//
// # Validation
//
// Validate checks the envelope and decodes and checks the payload. It reports
// every broken rule at once, as a *ValidationError of *FieldError values whose
// Field is the JSON path from the envelope ("data.year") and whose Rule says
// what is wrong ("must be between 1900 and 2100"). Validation is pure and
// deterministic; a ValidationError is permanent. It includes DynamoDB's
// limits (limits.go): an event any item of which DynamoDB could never store
// (nesting, numbers, key sizes, field lengths) is refused with a
// *LimitError naming the field and the limit; CheckItem applies the same
// limits to an item the projector is about to write.
//
// # Storage
//
// Item and EventFromItem map an envelope to and from its event-table item
// (see docs/event-contract.md). An item above one write unit (1 KB) stores
// data as one zstd frame compressed with a dictionary trained on the payload
// shapes streamfold accepts (zdict/, go generate); EventFromItem returns the
// exact original bytes from either form, and from items written before
// compression. ItemSize is DynamoDB's size of an item; MaxItemBytes its
// limit. Tables lists the table specifications from which local tables are
// created and against which Terraform is checked.
package schema
