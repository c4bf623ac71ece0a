package archiver

import (
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/streamimage"
)

// Record is one archived event with its stream position: the DynamoDB stream
// SequenceNumber and the stream record's eventID.
type Record struct {
	Event         schema.Event
	Seq           string
	StreamEventID string
	// payload is Event's data as DecodeRecord validated it, so that the
	// typed columns need not decode it again; nil means decode on write.
	payload schema.Payload
}

// compareRecords orders by event time, then stream position.
func compareRecords(a, b *Record) int {
	if c := a.Event.Time.Compare(b.Event.Time); c != 0 {
		return c
	}
	return streamimage.CompareSeq(a.Seq, b.Seq)
}
