package seed003

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestUpdateInput(t *testing.T) {
	key := Item{attrPK: avS("1#2"), attrSK: avS("v")}
	with := func(extra Item) Item {
		it := Item{attrPK: avS("1#2"), attrSK: avS("v")}
		for k, v := range extra {
			it[k] = v
		}
		return it
	}
	tests := []struct {
		name       string
		prev, next Item
		wantExpr   string
		wantNames  map[string]string
		wantValues Item
	}{
		{
			name:     "nothing differs: no update",
			prev:     with(Item{"status": avS("queued")}),
			next:     with(Item{"status": avS("queued")}),
			wantExpr: "",
		},
		{
			name:       "a changed and a new attribute, in name order",
			prev:       with(Item{"status": avS("queued"), "job_name": avS("build")}),
			next:       with(Item{"status": avS("in_progress"), "job_name": avS("build"), "started_at": avS("2025-01-15T10:00:25.000Z")}),
			wantExpr:   "SET #s0 = :s0, #s1 = :s1",
			wantNames:  map[string]string{"#s0": "started_at", "#s1": "status"},
			wantValues: Item{":s0": avS("2025-01-15T10:00:25.000Z"), ":s1": avS("in_progress")},
		},
		{
			name:      "a removed attribute",
			prev:      with(Item{"conclusion": avS("success")}),
			next:      with(Item{}),
			wantExpr:  "REMOVE #r0",
			wantNames: map[string]string{"#r0": "conclusion"},
		},
		{
			name:       "set and remove",
			prev:       with(Item{"a": avN(1), "b": avN(2)}),
			next:       with(Item{"a": avN(3)}),
			wantExpr:   "SET #s0 = :s0 REMOVE #r0",
			wantNames:  map[string]string{"#s0": "a", "#r0": "b"},
			wantValues: Item{":s0": avN(3)},
		},
		{
			name:       "keys are never set: a new item's update sets the rest",
			prev:       Item{},
			next:       with(Item{"a": avN(1)}),
			wantExpr:   "SET #s0 = :s0",
			wantNames:  map[string]string{"#s0": "a"},
			wantValues: Item{":s0": avN(1)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := updateInput("jobs", key, tt.prev, tt.next)
			if tt.wantExpr == "" {
				if in != nil {
					t.Fatalf("got %s, want no update", aws.ToString(in.UpdateExpression))
				}
				return
			}
			if in == nil {
				t.Fatalf("got no update, want %s", tt.wantExpr)
			}
			if got := aws.ToString(in.UpdateExpression); got != tt.wantExpr {
				t.Errorf("expression %q, want %q", got, tt.wantExpr)
			}
			if !reflect.DeepEqual(in.ExpressionAttributeNames, tt.wantNames) {
				t.Errorf("names %v, want %v", in.ExpressionAttributeNames, tt.wantNames)
			}
			if !reflect.DeepEqual(in.ExpressionAttributeValues, tt.wantValues) {
				t.Errorf("values %v, want %v", in.ExpressionAttributeValues, tt.wantValues)
			}
			if !reflect.DeepEqual(in.Key, key) || aws.ToString(in.TableName) != "jobs" {
				t.Errorf("key %v table %s", in.Key, aws.ToString(in.TableName))
			}
		})
	}
}

func TestChanges(t *testing.T) {
	null := &types.AttributeValueMemberNULL{Value: true}
	ch := func(from, to types.AttributeValue) types.AttributeValue {
		return &types.AttributeValueMemberM{Value: Item{"from": from, "to": to}}
	}
	tests := []struct {
		name       string
		prev, next Item
		want       map[string]types.AttributeValue
	}{
		{
			name: "new job: every attribute from NULL, keys and derived attributes left out",
			prev: nil,
			next: Item{attrPK: avS("1#2"), attrSK: avS("v"), gsi1PK: avS("1#queued"), "status": avS("queued"), "last_updated_at": avS("x"), attrTTL: avN(9)},
			want: map[string]types.AttributeValue{"status": ch(null, avS("queued"))},
		},
		{
			name: "status change",
			prev: Item{"status": avS("queued"), "job_name": avS("build")},
			next: Item{"status": avS("completed"), "job_name": avS("build"), "conclusion": avS("success")},
			want: map[string]types.AttributeValue{"status": ch(avS("queued"), avS("completed")), "conclusion": ch(null, avS("success"))},
		},
		{
			name: "removed attribute",
			prev: Item{"pool_name": avS("small")},
			next: Item{},
			want: map[string]types.AttributeValue{"pool_name": ch(avS("small"), null)},
		},
		{
			name: "nothing but last_updated_at",
			prev: Item{"status": avS("queued"), "last_updated_at": avS("a")},
			next: Item{"status": avS("queued"), "last_updated_at": avS("b")},
			want: map[string]types.AttributeValue{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changes(tt.prev, tt.next); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRunCounters(t *testing.T) {
	tests := []struct {
		name       string
		prev, next Item
		want       map[string]int64
	}{
		{"first webhook", nil, Item{"job_name": avS("build"), "status": avS("queued")}, map[string]int64{"total_jobs": 1}},
		{"runner event before any webhook", nil, Item{"status": avS("scheduled")}, map[string]int64{}},
		{"in progress", Item{"job_name": avS("b"), "status": avS("queued")}, Item{"job_name": avS("b"), "status": avS("in_progress")}, map[string]int64{}},
		{"completed, success", Item{"job_name": avS("b"), "status": avS("in_progress")}, Item{"job_name": avS("b"), "status": avS("completed"), "conclusion": avS("success")}, map[string]int64{"completed_jobs": 1}},
		{"completed, failure", Item{"job_name": avS("b"), "status": avS("in_progress")}, Item{"job_name": avS("b"), "status": avS("completed"), "conclusion": avS("failure")}, map[string]int64{"completed_jobs": 1, "failed_jobs": 1}},
		{"first webhook is completed", nil, Item{"job_name": avS("b"), "status": avS("completed"), "conclusion": avS("timed_out")}, map[string]int64{"total_jobs": 1, "completed_jobs": 1, "failed_jobs": 1}},
		{"completed again", Item{"job_name": avS("b"), "status": avS("completed")}, Item{"job_name": avS("b"), "status": avS("completed")}, map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runCounters(tt.prev, tt.next); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMoveStatusNeverBack(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{"", "queued", "queued"},
		{"queued", "in_progress", "in_progress"},
		{"in_progress", "queued", "in_progress"},
		{"completed", "scheduled", "completed"},
		{"waiting", "queued", "waiting"},
		{"scheduled", "waiting", "scheduled"},
	}
	for _, tt := range tests {
		it := Item{}
		if tt.from != "" {
			it["status"] = avS(tt.from)
		}
		moveStatus(it, tt.to)
		if got := str(it, "status"); got != tt.want {
			t.Errorf("%q then %q: got %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestEventType(t *testing.T) {
	for in, want := range map[string]string{
		"github.workflow_job.queued":      "webhook_queued",
		"github.workflow_job.in_progress": "webhook_in_progress",
		"runson.runner.scheduled":         "runner_scheduled",
		"runson.runner.terminated":        "runner_terminated",
	} {
		if got := eventType(in); got != want {
			t.Errorf("eventType(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTablesAsTheSeedDefinesThem pins the table definitions to seed 003:
// keys PK/SK, workflow_jobs' three GSIs on the concatenated keys sorted by
// created_at, projecting all attributes.
func TestTablesAsTheSeedDefinesThem(t *testing.T) {
	ins := NewTables("p-").CreateTableInputs()
	var got []string
	for _, in := range ins {
		s := aws.ToString(in.TableName) + " " + aws.ToString(in.KeySchema[0].AttributeName) + "/" + aws.ToString(in.KeySchema[1].AttributeName)
		for _, g := range in.GlobalSecondaryIndexes {
			s += " " + aws.ToString(g.IndexName) + "=" + aws.ToString(g.KeySchema[0].AttributeName) + "/" + aws.ToString(g.KeySchema[1].AttributeName) + ":" + string(g.Projection.ProjectionType)
		}
		if in.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s: billing %s", aws.ToString(in.TableName), in.BillingMode)
		}
		got = append(got, s)
	}
	want := []string{
		"p-workflow_jobs PK/SK GSI1=GSI1PK/created_at:ALL GSI2=GSI2PK/created_at:ALL GSI3=GSI3PK/created_at:ALL",
		"p-workflow_job_events PK/SK",
		"p-workflow_runs PK/SK",
		"p-deployments PK/SK",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
}
