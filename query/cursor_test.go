package query

import (
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

var testNaming = schema.Naming{Prefix: "unit", Stage: "dev"}

func newTestClient(t *testing.T, api DynamoAPI, key []byte) *Client {
	t.Helper()
	c, err := New(api, testNaming, Config{CursorKey: key, JobFold: testJobFold})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lek is a LastEvaluatedKey of AgentDateIndex.
func lek(arn string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"executionArn": avS(arn), "agentName": avS("a"), "startDate": avS("2026-01-05T00:00:00.000Z"),
	}
}

// firstPage returns the Next of a first page of executions by agent whose
// DynamoDB answer has a LastEvaluatedKey.
func firstPage(t *testing.T, c *Client, f *fakeAPI, agent string) string {
	t.Helper()
	f.pages = []*dynamodb.QueryOutput{{Items: []map[string]types.AttributeValue{{"executionArn": avS("x")}}, LastEvaluatedKey: lek("x")}}
	p, err := c.ExecutionsByAgent(ctx, agent, TimeRange{}, PageRequest{Limit: 1})
	if err != nil || p.Next == "" {
		t.Fatalf("first page: %v, next %q", err, p.Next)
	}
	return p.Next
}

func TestCursorRoundTrip(t *testing.T) {
	f := &fakeAPI{}
	c := newTestClient(t, f, testKey)
	next := firstPage(t, c, f, "a")
	if strings.Contains(next, "executionArn") || strings.ContainsAny(next, "+/=") {
		t.Fatalf("cursor %q is not opaque base64url", next)
	}
	if _, err := c.ExecutionsByAgent(ctx, "a", TimeRange{}, PageRequest{Limit: 1, Cursor: next}); err != nil {
		t.Fatal(err)
	}
	got := f.queries[len(f.queries)-1].ExclusiveStartKey
	if canonJSON(Plain(got)) != canonJSON(Plain(lek("x"))) {
		t.Fatalf("second page started at %v, want the first page's LastEvaluatedKey", Plain(got))
	}
}

func TestTamperedCursorsRejected(t *testing.T) {
	f := &fakeAPI{}
	c := newTestClient(t, f, testKey)
	good := firstPage(t, c, f, "a")
	other := firstPage(t, c, f, "b") // same pattern, another parameter
	foreign := firstPage(t, newTestClient(t, f, []byte("another-key-0123456789")), f, "a")
	raw, _ := base64.RawURLEncoding.DecodeString(good)

	flipped := []string{}
	for _, i := range []int{0, 5, len(good) / 2, len(good) - 1} {
		b := []byte(good)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		flipped = append(flipped, string(b))
	}
	rawFlip := append([]byte(nil), raw...)
	rawFlip[10] ^= 1 // a bit of the body, re-encoded validly
	// A forged cursor: a valid body with a key chosen by the client, no MAC.
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"q":"x","k":{"executionArn":{"S":"evil"}}}` + strings.Repeat("0", 32)))

	tests := []struct{ name, cursor string }{
		{"flipped character 0", flipped[0]},
		{"flipped character 5", flipped[1]},
		{"flipped middle character", flipped[2]},
		{"flipped last character", flipped[3]},
		{"flipped body bit", base64.RawURLEncoding.EncodeToString(rawFlip)},
		{"truncated by one", good[:len(good)-1]},
		{"truncated to half", good[:len(good)/2]},
		{"signature only", base64.RawURLEncoding.EncodeToString(raw[len(raw)-32:])},
		{"another query's cursor", other},
		{"signed with another key", foreign},
		{"forged", forged},
		{"not base64", "!!!"},
		{"padded base64", good + "=="},
		{"too long", strings.Repeat("A", 5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(f.queries)
			_, err := c.ExecutionsByAgent(ctx, "a", TimeRange{}, PageRequest{Limit: 1, Cursor: tt.cursor})
			if !errors.Is(err, ErrBadCursor) {
				t.Fatalf("err = %v, want ErrBadCursor", err)
			}
			if len(f.queries) != n {
				t.Fatal("a bad cursor reached DynamoDB")
			}
		})
	}
	t.Run("another pattern's cursor", func(t *testing.T) {
		_, err := c.ExecutionsByStatus(ctx, "FAILED", TimeRange{}, PageRequest{Cursor: good})
		if !errors.Is(err, ErrBadCursor) {
			t.Fatalf("err = %v, want ErrBadCursor", err)
		}
	})
	t.Run("same pattern, another range", func(t *testing.T) {
		_, err := c.ExecutionsByAgent(ctx, "a", TimeRange{From: time.Unix(0, 0)}, PageRequest{Cursor: good})
		if !errors.Is(err, ErrBadCursor) {
			t.Fatalf("err = %v, want ErrBadCursor", err)
		}
	})
}

func TestCursorCodecKeyShape(t *testing.T) {
	cc := cursorCodec{key: testKey}
	fp := fingerprint{"p", []string{"a=1"}}
	attrs := keyAttrs(schema.TableExecutions, "AgentDateIndex")
	// A cursor whose key has other attributes than the query's is bad even
	// with a valid signature (defence in depth).
	s, err := cc.encode(fp, 0, map[string]types.AttributeValue{"pk": avS("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cc.decode(s, fp, attrs, 1); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("foreign key shape: %v", err)
	}
	// Phase out of range.
	s, _ = cc.encode(fp, 3, nil)
	if _, _, err := cc.decode(s, fp, attrs, 2); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("phase out of range: %v", err)
	}
	// A phase with no key yet decodes to that phase and no key.
	s, _ = cc.encode(fp, 1, nil)
	if p, k, err := cc.decode(s, fp, attrs, 2); err != nil || p != 1 || k != nil {
		t.Fatalf("phase 1: %d %v %v", p, k, err)
	}
	// Numbers survive.
	s, _ = cc.encode(fp, 0, map[string]types.AttributeValue{"executionArn": avS("x"), "agentName": avS("a"), "startDate": &types.AttributeValueMemberN{Value: "12.5"}})
	if _, k, err := cc.decode(s, fp, attrs, 1); err != nil || k["startDate"].(*types.AttributeValueMemberN).Value != "12.5" {
		t.Fatalf("number key: %v %v", k, err)
	}
	// Binary keys are not used by streamfold and are refused.
	if _, err := cc.encode(fp, 0, map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{1}}}); err == nil {
		t.Fatal("binary key encoded")
	}
}

func TestMultiPhasePaging(t *testing.T) {
	// Running executions of both types: step-functions, then
	// durable-functions, a page filling itself across the two.
	f := &fakeAPI{pages: []*dynamodb.QueryOutput{
		{Items: []map[string]types.AttributeValue{{"pk": avS("sf1")}}}, // sf: last page
		{Items: []map[string]types.AttributeValue{{"pk": avS("ldf1")}}, LastEvaluatedKey: map[string]types.AttributeValue{ // ldf: more
			"pk": avS("ldf1"), "sk": avS("metadata"), "workflowType": avS(DurableFunctions), "entityType": avS("execution"), "status": avS("running"), "createdAt": avS("t")}},
		{Items: []map[string]types.AttributeValue{{"pk": avS("ldf2")}}},
	}}
	c := newTestClient(t, f, testKey)
	p1, err := c.RunningExecutions(ctx, "", PageRequest{Limit: 2})
	if err != nil || len(p1.Items) != 2 || p1.Next == "" {
		t.Fatalf("page 1: %v %v", p1, err)
	}
	if len(f.queries) != 2 || aws.ToInt32(f.queries[0].Limit) != 2 || aws.ToInt32(f.queries[1].Limit) != 1 {
		t.Fatalf("page 1 queries: %d, limits %v %v", len(f.queries), f.queries[0].Limit, f.queries[1].Limit)
	}
	if v := f.queries[1].ExpressionAttributeValues[":v0"].(*types.AttributeValueMemberS).Value; v != DurableFunctions {
		t.Fatalf("second phase queried %s", v)
	}
	p2, err := c.RunningExecutions(ctx, "", PageRequest{Limit: 2, Cursor: p1.Next})
	if err != nil || len(p2.Items) != 1 || p2.Next != "" || str(p2.Items[0], "pk") != "ldf2" {
		t.Fatalf("page 2: %v %v", p2, err)
	}
	if f.queries[2].ExclusiveStartKey == nil || aws.ToString(f.queries[2].KeyConditionExpression) != aws.ToString(f.queries[1].KeyConditionExpression) {
		t.Fatal("page 2 did not resume the durable-functions query")
	}
	if _, err := c.RunningExecutions(ctx, StepFunctions, PageRequest{Cursor: p1.Next}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("both-types cursor used for one type: %v", err)
	}
}

// TestShardCursorRoundTrip: a sharded cursor keeps, per shard, not yet
// read (nil), exhausted ({}) and a resume key apart, and is refused where
// the shard count or the key attributes differ.
func TestShardCursorRoundTrip(t *testing.T) {
	c := cursorCodec{key: []byte("0123456789abcdef")}
	fp := fingerprint{"p", []string{"shards=3"}}
	attrs := []string{"executionArn", "gsiShard", "startDate", "status"}
	key := map[string]types.AttributeValue{
		"executionArn": &types.AttributeValueMemberS{Value: "arn"}, "gsiShard": &types.AttributeValueMemberN{Value: "2"},
		"startDate": &types.AttributeValueMemberS{Value: "2026-01-05T00:00:00Z"}, "status": &types.AttributeValueMemberS{Value: "RUNNING"},
	}
	s, err := c.encodeShards(fp, 0, []map[string]types.AttributeValue{nil, {}, key})
	if err != nil {
		t.Fatal(err)
	}
	phase, keys, err := c.decodeShards(s, fp, attrs, 1, 3)
	if err != nil || phase != 0 {
		t.Fatalf("decode: %d %v", phase, err)
	}
	if keys[0] != nil || keys[1] == nil || len(keys[1]) != 0 || !reflect.DeepEqual(keys[2], key) {
		t.Errorf("decoded %v", keys)
	}
	if _, _, err := c.decodeShards(s, fp, attrs, 1, 4); err == nil {
		t.Error("a cursor of 3 shards decoded for 4")
	}
	if _, _, err := c.decode(s, fp, attrs, 1); err == nil {
		t.Error("a sharded cursor decoded as an unsharded one")
	}
	if _, _, err := c.decodeShards(s, fp, attrs[:3], 1, 3); err == nil {
		t.Error("a cursor with other key attributes decoded")
	}
}
