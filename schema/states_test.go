package schema_test

import (
	"reflect"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// Redrive dates of the tests: seed002-running starts at 1759149290000
// (2025-09-29T12:34:50Z).
const (
	testStart   = 1759149290000
	testRedrive = 1759150800000 // 13:00:00, the redrive
	testStop    = 1759150935000 // 13:02:15, the redriven attempt's end
)

// TestExecutionRedriveDecodes: the redrive members decode; details sent
// before redrive existed, and nulls, mean attempt 0.
func TestExecutionRedriveDecodes(t *testing.T) {
	tests := []struct {
		name      string
		set       map[string]any
		wantCount int
		wantDate  *int64
		wantState string
		start     int64
		startOK   bool
	}{
		{"no redrive members (older details)", nil, 0, nil, "", testStart, true},
		{"nulls", map[string]any{"redriveCount": nil, "redriveDate": nil, "redriveStatus": nil}, 0, nil, "", testStart, true},
		{"attempt 0 as EventBridge sends it", map[string]any{"redriveCount": 0, "redriveStatus": "NOT_REDRIVABLE",
			"redriveStatusReason": "Execution is RUNNING and cannot be redriven"}, 0, nil, "NOT_REDRIVABLE", testStart, true},
		{"redriven", map[string]any{"redriveCount": 1, "redriveDate": testRedrive, "redriveStatus": "NOT_REDRIVABLE"},
			1, ptr(int64(testRedrive)), "NOT_REDRIVABLE", testRedrive, true},
		{"redriven without redriveDate", map[string]any{"redriveCount": 2}, 2, nil, "", 0, false},
		{"an unknown redriveStatus is kept, not refused", map[string]any{"redriveStatus": "REDRIVABLE_SOMEDAY"},
			0, nil, "REDRIVABLE_SOMEDAY", testStart, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base(t, "seed002-running")
			if tt.set != nil {
				e = withNulls(t, e, tt.set)
			}
			p, err := schema.Validate(&e)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			d := p.(*schema.ExecutionStatusChange)
			if d.RedriveCount != tt.wantCount || !reflect.DeepEqual(d.RedriveDate, tt.wantDate) || d.RedriveStatus != tt.wantState {
				t.Errorf("redrive = (%d, %v, %q), want (%d, %v, %q)", d.RedriveCount, d.RedriveDate, d.RedriveStatus, tt.wantCount, tt.wantDate, tt.wantState)
			}
			if start, ok := d.AttemptStart(); start != tt.start || ok != tt.startOK {
				t.Errorf("AttemptStart = (%d, %v), want (%d, %v)", start, ok, tt.start, tt.startOK)
			}
		})
	}
}

func TestExecutionRedriveRules(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		set     map[string]any
		want    string // "" for valid
	}{
		{"redriven RUNNING", "seed002-running", map[string]any{"redriveCount": 1, "redriveDate": testRedrive}, ""},
		{"redriven SUCCEEDED", "seed002-succeeded", map[string]any{"redriveCount": 1, "redriveDate": testRedrive, "stopDate": testStop}, ""},
		{"a redriven RUNNING may carry the previous attempt's stopDate", "seed002-running",
			map[string]any{"redriveCount": 1, "redriveDate": testRedrive, "stopDate": testStart + 10_000}, ""},
		{"redriveDate with redriveCount 0 is ignored, not refused", "seed002-running", map[string]any{"redriveCount": 0, "redriveDate": testRedrive}, ""},
		{"negative redriveCount", "seed002-running", map[string]any{"redriveCount": -1},
			"data.redriveCount: must be between 0 and 25000"},
		{"redriveCount beyond any history", "seed002-running", map[string]any{"redriveCount": 25_001},
			"data.redriveCount: must be between 0 and 25000"},
		{"fractional redriveCount", "seed002-running", map[string]any{"redriveCount": 1.5},
			"data.redriveCount: must be an integer, got number 1.5"},
		{"redriveCount as text", "seed002-running", map[string]any{"redriveCount": "1"},
			"data.redriveCount: must be a JSON number, got string"},
		{"redriveDate as an ISO time", "seed002-running", map[string]any{"redriveCount": 1, "redriveDate": "2025-09-29T13:00:00Z"},
			"data.redriveDate: must be a JSON number, got string"},
		{"redriveDate zero", "seed002-running", map[string]any{"redriveCount": 1, "redriveDate": 0},
			"data.redriveDate: must be a positive epoch-milliseconds time (or null)"},
		{"redriveDate before startDate", "seed002-running", map[string]any{"redriveCount": 1, "redriveDate": testStart - 1},
			"data.redriveDate: must not be before startDate"},
		{"redriven attempt stopping before its redrive", "seed002-succeeded",
			map[string]any{"redriveCount": 1, "redriveDate": testRedrive, "stopDate": testRedrive - 1},
			"data.stopDate: must not be before redriveDate"},
		{"RUNNING of attempt 0 with a stopDate", "seed002-running", map[string]any{"redriveCount": 0, "stopDate": testStop},
			"data.stopDate: must be absent while status is RUNNING"},
		{"redriveStatus not a string", "seed002-running", map[string]any{"redriveStatus": 1},
			"data.redriveStatus: must be a JSON string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := withNulls(t, base(t, tt.fixture), tt.set)
			_, err := schema.Validate(&e)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v, want valid", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate: valid, want %q", tt.want)
			case tt.want != "" && err.Error() != tt.want:
				t.Fatalf("Validate error\n got: %s\nwant: %s", err, tt.want)
			}
		})
	}
}

// withNulls is withData where a nil value sets the member to JSON null
// instead of deleting it.
func withNulls(t *testing.T, e schema.Event, set map[string]any) schema.Event {
	t.Helper()
	plain := map[string]any{}
	var nulls []string
	for k, v := range set {
		if v == nil {
			nulls = append(nulls, k)
			continue
		}
		plain[k] = v
	}
	e = withData(t, e, plain)
	if len(nulls) > 0 {
		b := e.Data[:len(e.Data)-1]
		out := append([]byte(nil), b...)
		for _, k := range nulls {
			out = append(out, []byte(`,"`+k+`":null`)...)
		}
		e.Data = append(out, '}')
	}
	return e
}

func ptr[T any](v T) *T { return &v }
