package schema_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// TestItemShapes checks the conventions of the typed projection items: an
// unknown value is absent, a known 0 or false behind a pointer is present,
// decimals keep their text, and each shape round-trips.
func TestItemShapes(t *testing.T) {
	payload := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"n": &types.AttributeValueMemberN{Value: "1.50"},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}},
	}}
	cases := []struct {
		name string
		item any
		want map[string]types.AttributeValue
	}{
		{
			name: "execution with zero redriveCount and duration",
			item: &schema.ExecutionItem{ExecutionArn: "arn", DurationSeconds: ptr(int64(0))},
			want: map[string]types.AttributeValue{
				"executionArn":    &types.AttributeValueMemberS{Value: "arn"},
				"redriveCount":    &types.AttributeValueMemberN{Value: "0"},
				"durationSeconds": &types.AttributeValueMemberN{Value: "0"},
			},
		},
		{
			name: "message with a payload",
			item: &schema.MessageItem{MessageID: "m", Payload: &schema.RawValue{AttributeValue: payload}, RetryCount: ptr(int64(0))},
			want: map[string]types.AttributeValue{
				"message_id":  &types.AttributeValueMemberS{Value: "m"},
				"payload":     payload,
				"retry_count": &types.AttributeValueMemberN{Value: "0"},
			},
		},
		{
			name: "job with exact usage and a known false",
			item: &schema.JobItem{PK: "1#2", SK: "v", InstallationID: 1, JobID: 2, RepoIsPrivate: ptr(false),
				UsageInDollars: json.Number("0.0125"), Labels: []string{"a", "b"}},
			want: map[string]types.AttributeValue{
				"pk":               &types.AttributeValueMemberS{Value: "1#2"},
				"sk":               &types.AttributeValueMemberS{Value: "v"},
				"installation_id":  &types.AttributeValueMemberN{Value: "1"},
				"job_id":           &types.AttributeValueMemberN{Value: "2"},
				"was_interrupted":  &types.AttributeValueMemberBOOL{Value: false},
				"repo_is_private":  &types.AttributeValueMemberBOOL{Value: false},
				"usage_in_dollars": &types.AttributeValueMemberN{Value: "0.0125"},
				"labels": &types.AttributeValueMemberL{Value: []types.AttributeValue{
					&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberS{Value: "b"}}},
			},
		},
		{
			name: "task album with empty fields",
			item: &schema.TaskItem{PK: "t", SK: "metadata", EntityType: schema.EntityTask, Albums: []schema.TaskAlbumValue{{}}},
			want: map[string]types.AttributeValue{
				"pk":         &types.AttributeValueMemberS{Value: "t"},
				"sk":         &types.AttributeValueMemberS{Value: "metadata"},
				"entityType": &types.AttributeValueMemberS{Value: "task"},
				"sortValue":  &types.AttributeValueMemberN{Value: "0"},
				"albums": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"albumIndex": &types.AttributeValueMemberN{Value: "0"},
					"albumName":  &types.AttributeValueMemberS{Value: ""},
					"artist":     &types.AttributeValueMemberS{Value: ""},
					"year":       &types.AttributeValueMemberN{Value: "0"},
				}}}},
			},
		},
		{
			name: "album with a float",
			item: &schema.AlbumItem{PK: "e", SK: "album-0", EntityType: schema.EntityAlbum, PriceEstimate: ptr(12.5)},
			want: map[string]types.AttributeValue{
				"pk":            &types.AttributeValueMemberS{Value: "e"},
				"sk":            &types.AttributeValueMemberS{Value: "album-0"},
				"entityType":    &types.AttributeValueMemberS{Value: "album"},
				"albumIndex":    &types.AttributeValueMemberN{Value: "0"},
				"sortValue":     &types.AttributeValueMemberN{Value: "0"},
				"priceEstimate": &types.AttributeValueMemberN{Value: "12.5"},
			},
		},
		{
			name: "metrics row keeps decimal text",
			item: &schema.WorkflowMetricsItem{PK: "2025-01-15", SK: "metrics-sf", TotalCost: json.Number("0.000000001")},
			want: map[string]types.AttributeValue{
				"pk":        &types.AttributeValueMemberS{Value: "2025-01-15"},
				"sk":        &types.AttributeValueMemberS{Value: "metrics-sf"},
				"totalCost": &types.AttributeValueMemberN{Value: "0.000000001"},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := attributevalue.MarshalMap(c.item)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("marshal:\n got %#v\nwant %#v", got, c.want)
			}
			back := reflect.New(reflect.TypeOf(c.item).Elem()).Interface()
			if err := attributevalue.UnmarshalMap(got, back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.item) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", back, c.item)
			}
		})
	}
}
