package deadletter

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Sink is where a consumer's dead letters go: Quarantine keeps rec, with
// cause, so that it can be understood and replayed. Quarantining the same
// record twice keeps it once. It must be safe for concurrent use. Its
// signature is that of streamrun.Config.OnPoison.
type Sink interface {
	Quarantine(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error
}

// Putter is what TableSink needs of *Table.
type Putter interface {
	Put(ctx context.Context, d Letter) error
}

// TableSink is the Sink of the dead-letters table: each record becomes a
// Letter of Consumer with Reason.
type TableSink struct {
	Table    Putter
	Consumer string
	Reason   string
	// Now stamps QuarantinedAt. Default time.Now.
	Now func() time.Time
}

// Quarantine stores rec as a dead letter.
func (s TableSink) Quarantine(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	d, err := NewLetter(s.Consumer, s.Reason, rec, cause, now())
	if err != nil {
		return err
	}
	return s.Table.Put(ctx, d)
}
