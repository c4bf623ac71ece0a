package projector

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestMarshalEnvelope: marshalEnvelope writes exactly the bytes
// json.Marshal(envelope{...}) writes, so states stored before and after it
// compress alike and the store goldens hold.
func TestMarshalEnvelope(t *testing.T) {
	rows := []appliedRow{{T: "workflow_runs", K: map[string]string{"pk": "run#1", "sk": "v"}, C: map[string]int64{"total_jobs": 1}, S: map[string]int{"cost": 6}}}
	tests := []struct {
		name  string
		state json.RawMessage
		rows  []appliedRow
		items map[string]int64
	}{
		{"state, rows and items", mustMarshal(t, map[string]any{"b": "<a&b>", "a": []int{1, 2}, "u": "é\u2028"}), rows, map[string]int64{"workflows\x00x\x00metadata": 3, "a": 1}},
		{"no items", mustMarshal(t, map[string]any{"x": 1}), rows, nil},
		{"empty rows", mustMarshal(t, map[string]any{"x": 1}), []appliedRow{}, map[string]int64{}},
		{"nil rows", mustMarshal(t, map[string]any{"x": 1}), nil, nil},
		{"no state", nil, rows, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := json.Marshal(envelope{State: tt.state, Applied: tt.rows, Items: tt.items})
			got, err := marshalEnvelope(tt.state, tt.rows, tt.items)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Errorf("marshalEnvelope:\n got %s (%v)\nwant %s (%v)", got, err, want, wantErr)
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
