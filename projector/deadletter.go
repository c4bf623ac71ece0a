package projector

import (
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/deadletter"
)

// DeadLetter is a stream record a consumer could not process, kept with
// everything needed to understand and replay it (deadletter.Letter: the one
// dead-letter record of every consumer).
type DeadLetter = deadletter.Letter

// DeadLetters stores dead letters in the dead-letters table
// (deadletter.Table). Putting the same record twice keeps one item (the key
// is consumer + position). Each item expires schema.DeadLetterRetentionDays
// after it was quarantined. With EmitMetrics, every dead letter stored is
// also one CloudWatch metric datum (DeadLetterMetric), which the deployment
// alarms on. Its OnPoison(consumer) is the OnPoison of a stream runner.
type DeadLetters = deadletter.Table

// DeadLetterAPI is what DeadLetters needs of the DynamoDB client.
type DeadLetterAPI = deadletter.TableAPI

// NewDeadLetters returns the dead-letter store on table (a physical name).
func NewDeadLetters(api DeadLetterAPI, table string) *DeadLetters {
	return deadletter.NewTable(api, table)
}

// The dead-letter metric: namespace DeadLetterNamespace, name
// DeadLetterMetric (Count, one per dead letter stored), dimensions Table
// (the dead-letter table, so one per deployment) and Consumer.
const (
	DeadLetterNamespace = deadletter.Namespace
	DeadLetterMetric    = deadletter.Metric
)

// NewDeadLetter builds a DeadLetter for a record.
func NewDeadLetter(consumer, reason string, rec events.DynamoDBEventRecord, cause error, now time.Time) (DeadLetter, error) {
	return deadletter.NewLetter(consumer, reason, rec, cause, now)
}
