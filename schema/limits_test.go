package schema

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestNumberProblem(t *testing.T) {
	tests := []struct {
		lit string
		ok  bool
	}{
		{"0", true},
		{"-0.000", true},
		{"0e500", true},
		{"1", true},
		{"-12.5", true},
		{"12345678901234567890123456789012345678", true},       // 38 digits
		{"123456789012345678901234567890123456789", false},     // 39
		{"12345678901234567890123456789012345678901", false},   // 41 (the issue's)
		{"1.2345678901234567890123456789012345678", true},      // 38 digits with a point
		{"0.00012345678901234567890123456789012345678", true},  // leading zeros are not digits
		{"1" + strings.Repeat("0", 100), true},                 // 1E+100: one digit
		{"9.9999999999999999999999999999999999999E+125", true}, // the largest
		{"1E+126", false},
		{"1e200", false}, // the issue's
		{"-1e200", false},
		{"1E-130", true}, // the smallest
		{"-1E-130", true},
		{"9.9E-131", false},
		{"1e99999999999999999999", false},
		{"1e-99999999999999999999", false},
	}
	for _, tt := range tests {
		rule := NumberProblem(tt.lit)
		if (rule == "") != tt.ok {
			t.Errorf("NumberProblem(%s) = %q, want ok=%v", tt.lit, rule, tt.ok)
		}
	}
}

// nested returns a JSON object nesting depth levels of objects and arrays
// (alternating), the innermost holding 1.
func nested(depth int) string {
	var sb strings.Builder
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			sb.WriteString(`{"a":`)
		} else {
			sb.WriteString(`[0,`)
		}
	}
	sb.WriteString("1")
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			sb.WriteString(`}`)
		} else {
			sb.WriteString(`]`)
		}
	}
	return sb.String()
}

func TestCheckData(t *testing.T) {
	tests := []struct {
		name, data string
		field      string // "" for none
		limit      Limit
	}{
		{"flat", `{"a":1,"b":"x","c":[1,2,{"d":null}]}`, "", ""},
		{"32 levels", nested(32), "", ""},
		{"33 levels", nested(33), "data" + strings.Repeat(".a[1]", 16), LimitNesting},
		{"number in an array", `{"a":{"b":[1,2,1e200]}}`, "data.a.b[2]", LimitNumber},
		{"41 digits", `{"x":"1e200","n":12345678901234567890123456789012345678901}`, "data.n", LimitNumber},
		{"string that looks like a number", `{"x":"1e200 [[[[{"}`, "", ""},
		{"escaped key", `{"a\"b":{"c":1e-200}}`, `data.a"b.c`, LimitNumber},
		{"after a closed member", `{"a":{"b":1},"c":[{"d":1},{"e":[0,1e999]}]}`, "data.c[1].e[1]", LimitNumber},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !json.Valid([]byte(tt.data)) {
				t.Fatalf("test data is not JSON: %s", tt.data)
			}
			le := CheckData("data", []byte(tt.data))
			switch {
			case tt.field == "" && le != nil:
				t.Fatalf("CheckData = %v, want nil", le)
			case tt.field != "" && le == nil:
				t.Fatalf("CheckData = nil, want %s on %s", tt.limit, tt.field)
			case tt.field != "" && (le.Field != tt.field || le.Limit != tt.limit):
				t.Fatalf("CheckData = %s (%s), want %s on %s", le, le.Limit, tt.limit, tt.field)
			}
		})
	}
}

func TestValidateRefusesWhatDynamoDBCannotStore(t *testing.T) {
	msg := func(payload string) Event {
		return Event{ID: "m1", Source: "rez_agent/dev", Type: TypeMessageCreated, Time: time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC),
			Data: json.RawMessage(`{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","created_by":"x","message_type":"web_action",` +
				`"correlation_id":"660e8400-e29b-41d4-a716-446655440000","payload":` + payload + `}`)}
	}
	exec := func(arnName string) Event {
		return Event{ID: "x1", Source: "aws.states", Type: TypeExecutionStatusChange, Time: time.Date(2025, 10, 21, 14, 30, 0, 0, time.UTC),
			Data: json.RawMessage(`{"executionArn":"arn:aws:states:us-east-1:123456789012:execution:agent-prod:` + arnName +
				`","stateMachineArn":"arn:aws:states:us-east-1:123456789012:stateMachine:agent-prod","name":"n","status":"RUNNING","startDate":1}`)}
	}
	// The message's data holds payload at level 2: payload nesting 31
	// levels is data at 32.
	tests := []struct {
		name  string
		e     Event
		field string
		limit Limit
	}{
		{"payload at the nesting limit", msg(nested(31)), "", ""},
		{"payload over the nesting limit", msg(nested(32)), "data.payload" + strings.Repeat(".a[1]", 15) + ".a", LimitNesting},
		{"1e200", msg(`{"text":"hi","amount":1e200}`), "data.payload.amount", LimitNumber},
		{"41 digits", msg(`{"text":"hi","n":12345678901234567890123456789012345678901}`), "data.payload.n", LimitNumber},
		{"38 digits", msg(`{"text":"hi","n":12345678901234567890123456789012345678}`), "", ""},
		{"executionArn at its limit", exec(strings.Repeat("e", MaxARNBytes-len("arn:aws:states:us-east-1:123456789012:execution:agent-prod:"))), "", ""},
		{"executionArn over its limit", exec(strings.Repeat("e", 2100)), "data.executionArn", LimitLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e
			_, err := Validate(&e)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || !errors.Is(err, ErrLimit) {
				t.Fatalf("Validate = %v, want a *LimitError", err)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Errors) != 1 || ve.Errors[0].Field != tt.field || le.Limit != tt.limit {
				t.Fatalf("Validate = %v (%s), want one error on %s (%s)", err, le.Limit, tt.field, tt.limit)
			}
			if !strings.Contains(ve.Errors[0].Rule, "at most") && !strings.Contains(ve.Errors[0].Rule, "at least") {
				t.Errorf("rule %q does not state the limit", ve.Errors[0].Rule)
			}
		})
	}
}

func TestCheckItem(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	deep := func(depth int) types.AttributeValue {
		var v types.AttributeValue = num("1")
		for i := 0; i < depth; i++ {
			v = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"a": v}}
		}
		return v
	}
	msg := func(extra map[string]types.AttributeValue) map[string]types.AttributeValue {
		it := map[string]types.AttributeValue{"message_id": s("m"), "stage": s("dev"), "status": s("queued"), "created_date": s("2025-10-21")}
		for k, v := range extra {
			it[k] = v
		}
		return it
	}
	tests := []struct {
		name  string
		table string
		item  map[string]types.AttributeValue
		field string
		limit Limit
	}{
		{"plain", TableMessages, msg(nil), "", ""},
		{"hash key at its limit", TableExecutions, map[string]types.AttributeValue{"executionArn": s(strings.Repeat("a", 2048))}, "", ""},
		{"hash key over", TableExecutions, map[string]types.AttributeValue{"executionArn": s(strings.Repeat("a", 2049))}, "executions.executionArn", LimitPartitionKey},
		{"GSI hash key over", TableMessages, msg(map[string]types.AttributeValue{"message_type": s(strings.Repeat("é", 1025))}), "messages.message_type", LimitPartitionKey},
		{"sort key at its limit", TableEvents, map[string]types.AttributeValue{"subject": s("s"), "id": s(strings.Repeat("a", 1024))}, "", ""},
		{"sort key over", TableEvents, map[string]types.AttributeValue{"subject": s("s"), "id": s(strings.Repeat("a", 1025))}, "events.id", LimitSortKey},
		{"multi-attribute GSI range key over", TableWorkflows, map[string]types.AttributeValue{"pk": s("p"), "sk": s("s"), "createdAt": s(strings.Repeat("a", 1025))}, "workflows.createdAt", LimitSortKey},
		{"31 nested maps (32 levels with the item)", TableMessages, msg(map[string]types.AttributeValue{"payload": deep(31)}), "", ""},
		{"32 nested maps", TableMessages, msg(map[string]types.AttributeValue{"payload": deep(32)}), "messages.payload" + strings.Repeat(".a", 31), LimitNesting},
		{"number", TableMessages, msg(map[string]types.AttributeValue{"payload": &types.AttributeValueMemberL{Value: []types.AttributeValue{num("1"), num("1e200")}}}), "messages.payload[1]", LimitNumber},
		{"size", TableMessages, msg(map[string]types.AttributeValue{"error_message": s(strings.Repeat("x", MaxItemBytes))}), "messages", LimitItemSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckItem(tt.table, tt.item)
			var le *LimitError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("CheckItem = %v, want nil", err)
			case tt.field == "":
			case !errors.As(err, &le):
				t.Fatalf("CheckItem = %v, want %s on %s", err, tt.limit, tt.field)
			case le.Field != tt.field || le.Limit != tt.limit:
				t.Fatalf("CheckItem = %v (%s), want %s on %s", err, le.Limit, tt.limit, tt.field)
			}
		})
	}
}

// BenchmarkCheckData measures the limits scan of a webhook-sized data
// object (about 10 KB of nested JSON with numbers), which Validate runs on
// every event at ingest and in every consumer.
func BenchmarkCheckData(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"action":"queued","workflow_job":{"id":31275968012,"run_id":11223344,"labels":["ubuntu-latest"],"steps":[`)
	for i := 0; i < 60; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"name":"Run step number ` + strings.Repeat("x", 40) + `","status":"completed","conclusion":"success","number":12,"started_at":"2025-01-15T10:00:30Z","completed_at":"2025-01-15T10:00:31.5Z"}`)
	}
	sb.WriteString(`]},"repository":{"id":123456789,"full_name":"octo/repo","owner":{"login":"octo","id":42,"site_admin":false}},"installation":{"id":12345}}`)
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if le := CheckData("data", data); le != nil {
			b.Fatal(le)
		}
	}
}
