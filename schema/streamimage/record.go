package streamimage

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// EventSource is the eventSource of every DynamoDB Streams record.
const EventSource = "aws:dynamodb"

// TTL deletes are attributed to this identity.
const (
	ttlIdentityType      = "Service"
	ttlIdentityPrincipal = "dynamodb.amazonaws.com"
)

// LambdaRecord converts one GetRecords record into the record Lambda's event
// source mapping would deliver.
// eventSourceARN is the stream ARN; awsRegion is copied into the record.
//
// EventID, EventName, EventVersion, the stream record fields (Keys, NewImage,
// OldImage, SequenceNumber, SizeBytes, StreamViewType and
// ApproximateCreationDateTime, whose time.Time is copied unchanged) and
// UserIdentity are copied from r; nil pointers become zero values and a nil
// UserIdentity stays nil. EventSource is always "aws:dynamodb". If awsRegion
// is empty, r.AwsRegion is used.
//
// It returns ErrNoStreamRecord if r.Dynamodb is nil, and wraps the
// *PathError of an image that cannot be converted (see ToLambda) with the
// event ID and the image name; errors.Is and errors.As see through the
// wrapping. It never panics.
func LambdaRecord(r streamtypes.Record, eventSourceARN, awsRegion string) (events.DynamoDBEventRecord, error) {
	var out events.DynamoDBEventRecord
	if r.Dynamodb == nil {
		return out, fmt.Errorf("%w (event %q)", ErrNoStreamRecord, deref(r.EventID))
	}
	if awsRegion == "" {
		awsRegion = deref(r.AwsRegion)
	}
	sr := r.Dynamodb
	out = events.DynamoDBEventRecord{
		AWSRegion:      awsRegion,
		EventID:        deref(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    EventSource,
		EventVersion:   deref(r.EventVersion),
		EventSourceArn: eventSourceARN,
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: deref(sr.SequenceNumber),
			StreamViewType: string(sr.StreamViewType),
		},
	}
	if sr.ApproximateCreationDateTime != nil {
		out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *sr.ApproximateCreationDateTime}
	}
	if sr.SizeBytes != nil {
		out.Change.SizeBytes = *sr.SizeBytes
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{
			Type:        deref(r.UserIdentity.Type),
			PrincipalID: deref(r.UserIdentity.PrincipalId),
		}
	}
	images := []struct {
		name string
		in   map[string]streamtypes.AttributeValue
		out  *map[string]events.DynamoDBAttributeValue
	}{
		{"Keys", sr.Keys, &out.Change.Keys},
		{"NewImage", sr.NewImage, &out.Change.NewImage},
		{"OldImage", sr.OldImage, &out.Change.OldImage},
	}
	for _, img := range images {
		m, err := streamsToLambda(img.in)
		if err != nil {
			return events.DynamoDBEventRecord{}, fmt.Errorf("event %q %s: %w", out.EventID, img.name, err)
		}
		*img.out = m
	}
	return out, nil
}

// streamsToLambda converts a GetRecords image to a Lambda image by way of the
// SDK representation, so that the two paths can never disagree.
func streamsToLambda(img map[string]streamtypes.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	item, err := FromStreams(img)
	if err != nil {
		return nil, err
	}
	return ToLambda(item)
}

// IsTTLDelete reports whether r is a deletion made by DynamoDB's Time to Live
// process: a REMOVE whose userIdentity is type "Service", principalId
// "dynamodb.amazonaws.com".
func IsTTLDelete(r events.DynamoDBEventRecord) bool {
	return r.EventName == string(events.DynamoDBOperationTypeRemove) &&
		r.UserIdentity != nil &&
		r.UserIdentity.Type == ttlIdentityType &&
		r.UserIdentity.PrincipalID == ttlIdentityPrincipal
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
