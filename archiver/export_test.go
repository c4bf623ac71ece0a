package archiver

import "github.com/streamfold/streamfold/schema"

// WithPayload returns r carrying its event's decoded payload, as
// DecodeRecord returns the records of a stream batch (the handler decodes
// each event once, to validate it, and the typed columns reuse that).
// Records read back from files (compaction, migration) have none and are
// decoded on write.
func WithPayload(r Record) Record {
	if p, err := schema.Decode(r.Event); err == nil {
		r.payload = p
	}
	return r
}
