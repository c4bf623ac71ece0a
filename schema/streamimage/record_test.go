package streamimage

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

const testStreamARN = "arn:aws:dynamodb:us-east-1:123456789012:table/streamfold-events/stream/2024-05-01T00:00:00.000"

func streamKeys(subject, id string) map[string]streamtypes.AttributeValue {
	return map[string]streamtypes.AttributeValue{
		"subject": &streamtypes.AttributeValueMemberS{Value: subject},
		"id":      &streamtypes.AttributeValueMemberS{Value: id},
	}
}

func lambdaKeys(subject, id string) map[string]events.DynamoDBAttributeValue {
	return map[string]events.DynamoDBAttributeValue{
		"subject": events.NewStringAttribute(subject),
		"id":      events.NewStringAttribute(id),
	}
}

func TestLambdaRecord(t *testing.T) {
	created := time.Unix(1717171717, 0).UTC()
	expired := time.Unix(1719763800, 0).UTC()

	tests := []struct {
		name    string
		in      streamtypes.Record
		region  string
		want    events.DynamoDBEventRecord
		wantTTL bool
	}{
		{
			name: "INSERT",
			in: streamtypes.Record{
				AwsRegion:    aws.String("us-east-1"),
				EventID:      aws.String("c4ca4238a0b923820dcc509a6f75849b"),
				EventName:    streamtypes.OperationTypeInsert,
				EventSource:  aws.String("aws:dynamodb"),
				EventVersion: aws.String("1.1"),
				Dynamodb: &streamtypes.StreamRecord{
					ApproximateCreationDateTime: &created,
					Keys:                        streamKeys("user/1", "01HZ"),
					NewImage: map[string]streamtypes.AttributeValue{
						"subject": &streamtypes.AttributeValueMemberS{Value: "user/1"},
						"id":      &streamtypes.AttributeValueMemberS{Value: "01HZ"},
						"data":    &streamtypes.AttributeValueMemberS{Value: `{"size":1e400}`},
						"ttl":     &streamtypes.AttributeValueMemberN{Value: "1719763717"},
						"tags":    &streamtypes.AttributeValueMemberSS{Value: []string{"a", "b"}},
					},
					SequenceNumber: aws.String("111100000000012345678901"),
					SizeBytes:      aws.Int64(412),
					StreamViewType: streamtypes.StreamViewTypeNewAndOldImages,
				},
			},
			region: "us-east-1",
			want: events.DynamoDBEventRecord{
				AWSRegion:      "us-east-1",
				EventID:        "c4ca4238a0b923820dcc509a6f75849b",
				EventName:      "INSERT",
				EventSource:    "aws:dynamodb",
				EventVersion:   "1.1",
				EventSourceArn: testStreamARN,
				Change: events.DynamoDBStreamRecord{
					ApproximateCreationDateTime: events.SecondsEpochTime{Time: created},
					Keys:                        lambdaKeys("user/1", "01HZ"),
					NewImage: map[string]events.DynamoDBAttributeValue{
						"subject": events.NewStringAttribute("user/1"),
						"id":      events.NewStringAttribute("01HZ"),
						"data":    events.NewStringAttribute(`{"size":1e400}`),
						"ttl":     events.NewNumberAttribute("1719763717"),
						"tags":    events.NewStringSetAttribute([]string{"a", "b"}),
					},
					SequenceNumber: "111100000000012345678901",
					SizeBytes:      412,
					StreamViewType: "NEW_AND_OLD_IMAGES",
				},
			},
		},
		{
			name: "MODIFY region from record",
			in: streamtypes.Record{
				AwsRegion:    aws.String("eu-west-2"),
				EventID:      aws.String("m1"),
				EventName:    streamtypes.OperationTypeModify,
				EventVersion: aws.String("1.1"),
				Dynamodb: &streamtypes.StreamRecord{
					Keys:     streamKeys("s", "i"),
					OldImage: map[string]streamtypes.AttributeValue{"n": &streamtypes.AttributeValueMemberN{Value: "-0.000001"}},
					NewImage: map[string]streamtypes.AttributeValue{"n": &streamtypes.AttributeValueMemberN{Value: "2"}},
				},
			},
			want: events.DynamoDBEventRecord{
				AWSRegion:      "eu-west-2",
				EventID:        "m1",
				EventName:      "MODIFY",
				EventSource:    "aws:dynamodb",
				EventVersion:   "1.1",
				EventSourceArn: testStreamARN,
				Change: events.DynamoDBStreamRecord{
					Keys:     lambdaKeys("s", "i"),
					OldImage: map[string]events.DynamoDBAttributeValue{"n": events.NewNumberAttribute("-0.000001")},
					NewImage: map[string]events.DynamoDBAttributeValue{"n": events.NewNumberAttribute("2")},
				},
			},
		},
		{
			name: "TTL REMOVE",
			in: streamtypes.Record{
				AwsRegion:    aws.String("us-east-1"),
				EventID:      aws.String("eccbc87e4b5ce2fe28308fd9f2a7baf3"),
				EventName:    streamtypes.OperationTypeRemove,
				EventSource:  aws.String("aws:dynamodb"),
				EventVersion: aws.String("1.1"),
				UserIdentity: &streamtypes.Identity{
					Type:        aws.String("Service"),
					PrincipalId: aws.String("dynamodb.amazonaws.com"),
				},
				Dynamodb: &streamtypes.StreamRecord{
					ApproximateCreationDateTime: &expired,
					Keys:                        streamKeys("user/1", "01HX"),
					OldImage: map[string]streamtypes.AttributeValue{
						"subject": &streamtypes.AttributeValueMemberS{Value: "user/1"},
						"id":      &streamtypes.AttributeValueMemberS{Value: "01HX"},
						"ttl":     &streamtypes.AttributeValueMemberN{Value: "1719763700"},
						"gone":    &streamtypes.AttributeValueMemberNULL{Value: true},
					},
					SequenceNumber: aws.String("111300000000012345678903"),
					SizeBytes:      aws.Int64(256),
					StreamViewType: streamtypes.StreamViewTypeNewAndOldImages,
				},
			},
			region: "us-east-1",
			want: events.DynamoDBEventRecord{
				AWSRegion:      "us-east-1",
				EventID:        "eccbc87e4b5ce2fe28308fd9f2a7baf3",
				EventName:      "REMOVE",
				EventSource:    "aws:dynamodb",
				EventVersion:   "1.1",
				EventSourceArn: testStreamARN,
				UserIdentity:   &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"},
				Change: events.DynamoDBStreamRecord{
					ApproximateCreationDateTime: events.SecondsEpochTime{Time: expired},
					Keys:                        lambdaKeys("user/1", "01HX"),
					OldImage: map[string]events.DynamoDBAttributeValue{
						"subject": events.NewStringAttribute("user/1"),
						"id":      events.NewStringAttribute("01HX"),
						"ttl":     events.NewNumberAttribute("1719763700"),
						"gone":    events.NewNullAttribute(),
					},
					SequenceNumber: "111300000000012345678903",
					SizeBytes:      256,
					StreamViewType: "NEW_AND_OLD_IMAGES",
				},
			},
			wantTTL: true,
		},
		{
			name: "user REMOVE is not TTL",
			in: streamtypes.Record{
				EventID:   aws.String("r2"),
				EventName: streamtypes.OperationTypeRemove,
				Dynamodb:  &streamtypes.StreamRecord{Keys: streamKeys("s", "i")},
			},
			region: "us-east-1",
			want: events.DynamoDBEventRecord{
				AWSRegion:      "us-east-1",
				EventID:        "r2",
				EventName:      "REMOVE",
				EventSource:    "aws:dynamodb",
				EventSourceArn: testStreamARN,
				Change:         events.DynamoDBStreamRecord{Keys: lambdaKeys("s", "i")},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LambdaRecord(tc.in, testStreamARN, tc.region)
			mustNoErr(t, "LambdaRecord", err)
			assertEqual(t, "LambdaRecord", got, tc.want)
			if IsTTLDelete(got) != tc.wantTTL {
				t.Errorf("IsTTLDelete = %v, want %v", !tc.wantTTL, tc.wantTTL)
			}
			assertLambdaJSONCompatible(t, tc.in, got)
		})
	}
}

// assertLambdaJSONCompatible checks that a record produced by LambdaRecord
// survives the JSON encoding Lambda uses and still carries the same images.
func assertLambdaJSONCompatible(t *testing.T, in streamtypes.Record, rec events.DynamoDBEventRecord) {
	t.Helper()
	b, err := json.Marshal(rec)
	mustNoErr(t, "json.Marshal", err)
	var decoded events.DynamoDBEventRecord
	mustNoErr(t, "json.Unmarshal", json.Unmarshal(b, &decoded))
	for _, img := range []struct {
		name   string
		stream map[string]streamtypes.AttributeValue
		lambda map[string]events.DynamoDBAttributeValue
	}{
		{"Keys", in.Dynamodb.Keys, decoded.Change.Keys},
		{"NewImage", in.Dynamodb.NewImage, decoded.Change.NewImage},
		{"OldImage", in.Dynamodb.OldImage, decoded.Change.OldImage},
	} {
		want, err := FromStreams(img.stream)
		mustNoErr(t, "FromStreams "+img.name, err)
		got, err := FromLambda(img.lambda)
		mustNoErr(t, "FromLambda "+img.name, err)
		assertEqual(t, img.name+" after JSON round trip", got, want)
	}
	// aws-lambda-go quirk: a zero SecondsEpochTime is still marshalled
	// (omitempty never omits a struct) and UnixNano overflows, so only a set
	// time survives the JSON round trip.
	if !rec.Change.ApproximateCreationDateTime.IsZero() &&
		!decoded.Change.ApproximateCreationDateTime.Equal(rec.Change.ApproximateCreationDateTime.Time) {
		t.Errorf("ApproximateCreationDateTime after JSON: %v, want %v",
			decoded.Change.ApproximateCreationDateTime, rec.Change.ApproximateCreationDateTime)
	}
	if decoded.EventSourceArn != rec.EventSourceArn || decoded.EventName != rec.EventName || IsTTLDelete(decoded) != IsTTLDelete(rec) {
		t.Errorf("record header changed by JSON round trip: %+v", decoded)
	}
}

func TestLambdaRecordErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       streamtypes.Record
		wantIs   error
		wantPath string
		wantMsg  string
	}{
		{
			name:    "no stream record",
			in:      streamtypes.Record{EventID: aws.String("e1"), EventName: streamtypes.OperationTypeInsert},
			wantIs:  ErrNoStreamRecord,
			wantMsg: `streamimage: record has no dynamodb stream record (event "e1")`,
		},
		{
			name: "unknown member in NewImage",
			in: streamtypes.Record{EventID: aws.String("e2"), Dynamodb: &streamtypes.StreamRecord{
				Keys: streamKeys("s", "i"),
				NewImage: map[string]streamtypes.AttributeValue{"data": &streamtypes.AttributeValueMemberM{Value: map[string]streamtypes.AttributeValue{
					"x": &streamtypes.UnknownUnionMember{Tag: "V"},
				}}},
			}},
			wantIs:   ErrUnsupportedType,
			wantPath: "data.x",
			wantMsg:  `event "e2" NewImage: streamimage: attribute "data.x": unsupported attribute value type`,
		},
		{
			name: "NULL false in OldImage",
			in: streamtypes.Record{EventID: aws.String("e3"), Dynamodb: &streamtypes.StreamRecord{
				OldImage: map[string]streamtypes.AttributeValue{"n": &streamtypes.AttributeValueMemberNULL{}},
			}},
			wantIs:   ErrInvalidNull,
			wantPath: "n",
			wantMsg:  `event "e3" OldImage: streamimage: attribute "n": NULL attribute value must be true`,
		},
		{
			name: "nil key",
			in: streamtypes.Record{EventID: aws.String("e4"), Dynamodb: &streamtypes.StreamRecord{
				Keys: map[string]streamtypes.AttributeValue{"id": nil},
			}},
			wantIs:   ErrNilValue,
			wantPath: "id",
			wantMsg:  `event "e4" Keys: streamimage: attribute "id": nil attribute value`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LambdaRecord(tc.in, testStreamARN, "us-east-1")
			if err == nil {
				t.Fatal("expected an error, got nil")
			}
			assertEqual(t, "record on error", got, events.DynamoDBEventRecord{})
			if err.Error() != tc.wantMsg {
				t.Errorf("message:\n got %s\nwant %s", err, tc.wantMsg)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(err, %v) = false", tc.wantIs)
			}
			var pe *PathError
			if errors.As(err, &pe) != (tc.wantPath != "") {
				t.Fatalf("errors.As PathError = %v, want %v", !(tc.wantPath != ""), tc.wantPath != "")
			}
			if pe != nil && pe.Path != tc.wantPath {
				t.Errorf("Path = %q, want %q", pe.Path, tc.wantPath)
			}
		})
	}
}

func TestIsTTLDelete(t *testing.T) {
	ttl := &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	tests := []struct {
		name string
		r    events.DynamoDBEventRecord
		want bool
	}{
		{"ttl remove", events.DynamoDBEventRecord{EventName: "REMOVE", UserIdentity: ttl}, true},
		{"user remove", events.DynamoDBEventRecord{EventName: "REMOVE"}, false},
		{"modify by service", events.DynamoDBEventRecord{EventName: "MODIFY", UserIdentity: ttl}, false},
		{"other service", events.DynamoDBEventRecord{EventName: "REMOVE", UserIdentity: &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "example.amazonaws.com"}}, false},
		{"zero", events.DynamoDBEventRecord{}, false},
	}
	for _, tc := range tests {
		if got := IsTTLDelete(tc.r); got != tc.want {
			t.Errorf("%s: IsTTLDelete = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLambdaEventFixture decodes a realistic Lambda DynamoDB Streams event,
// converts every image of every record, and checks that a GetRecords record
// carrying the same data converts to exactly the record Lambda delivered.
func TestLambdaEventFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/lambda_event.json")
	mustNoErr(t, "read fixture", err)
	var ev events.DynamoDBEvent
	mustNoErr(t, "decode fixture", json.Unmarshal(raw, &ev))
	if len(ev.Records) != 3 {
		t.Fatalf("fixture has %d records, want 3", len(ev.Records))
	}
	wantTTL := []bool{false, false, true}
	for i, rec := range ev.Records {
		images := map[string]map[string]events.DynamoDBAttributeValue{
			"Keys": rec.Change.Keys, "NewImage": rec.Change.NewImage, "OldImage": rec.Change.OldImage,
		}
		sdk := map[string]map[string]types.AttributeValue{}
		for name, img := range images {
			item, err := FromLambda(img)
			mustNoErr(t, rec.EventID+" FromLambda "+name, err)
			back, err := ToLambda(item)
			mustNoErr(t, rec.EventID+" ToLambda "+name, err)
			assertEqual(t, rec.EventID+" "+name+" round trip", back, img)
			sdk[name] = item
		}
		if got := IsTTLDelete(rec); got != wantTTL[i] {
			t.Errorf("record %d IsTTLDelete = %v, want %v", i, got, wantTTL[i])
		}

		// The same data as GetRecords would return it.
		streamImg := func(name string) map[string]streamtypes.AttributeValue {
			t.Helper()
			s, err := ToStreams(sdk[name])
			mustNoErr(t, "ToStreams "+name, err)
			return s
		}
		created := rec.Change.ApproximateCreationDateTime.Time
		in := streamtypes.Record{
			AwsRegion:    aws.String(rec.AWSRegion),
			EventID:      aws.String(rec.EventID),
			EventName:    streamtypes.OperationType(rec.EventName),
			EventSource:  aws.String(rec.EventSource),
			EventVersion: aws.String(rec.EventVersion),
			Dynamodb: &streamtypes.StreamRecord{
				ApproximateCreationDateTime: &created,
				Keys:                        streamImg("Keys"),
				NewImage:                    streamImg("NewImage"),
				OldImage:                    streamImg("OldImage"),
				SequenceNumber:              aws.String(rec.Change.SequenceNumber),
				SizeBytes:                   aws.Int64(rec.Change.SizeBytes),
				StreamViewType:              streamtypes.StreamViewType(rec.Change.StreamViewType),
			},
		}
		if rec.UserIdentity != nil {
			in.UserIdentity = &streamtypes.Identity{
				Type:        aws.String(rec.UserIdentity.Type),
				PrincipalId: aws.String(rec.UserIdentity.PrincipalID),
			}
		}
		got, err := LambdaRecord(in, rec.EventSourceArn, rec.AWSRegion)
		mustNoErr(t, "LambdaRecord", err)
		if !reflect.DeepEqual(got, rec) {
			t.Errorf("record %d: LambdaRecord differs from the delivered record:\n got %+v\nwant %+v", i, got, rec)
		}
	}

	// Spot-check values that must survive byte for byte.
	first, err := FromLambda(ev.Records[0].Change.NewImage)
	mustNoErr(t, "FromLambda", err)
	assertEqual(t, "ttl", first["ttl"], types.AttributeValue(&types.AttributeValueMemberN{Value: "1719763717"}))
	assertEqual(t, "recordedat", first["recordedat"], types.AttributeValue(&types.AttributeValueMemberN{Value: "1717171717.123456"}))
	wantData := `{"ref":"refs/heads/main","commits":[{"id":"a1b2c3","message":"fix: ünïcode \"quotes\""}],"forced":false,"size":1e400}`
	assertEqual(t, "data", first["data"], types.AttributeValue(&types.AttributeValueMemberS{Value: wantData}))
	if len(first) != 8 {
		t.Errorf("NewImage has %d attributes, want 8", len(first))
	}
}
