package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
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

// TestOldEnvelopes: states written before the state dictionary (frames
// without a dictionary, testdata/envelope/v0-<kind>.zst, from the encoder of
// that time, with the envelope JSON they hold beside them) decode to the
// same state, and re-encoded they name StateDictionary, decode to the same
// envelope and are no larger.
func TestOldEnvelopes(t *testing.T) {
	frames, err := filepath.Glob(filepath.Join("testdata", "envelope", "v0-*.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) < 4 {
		t.Fatalf("want an old envelope of each of the 4 kinds, found %v", frames)
	}
	for _, path := range frames {
		t.Run(filepath.Base(path), func(t *testing.T) {
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, ".zst") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.TrimSuffix(want, []byte("\n"))
			if id := frameDict(t, old); id != 0 {
				t.Fatalf("old frame names dictionary %d, want none", id)
			}
			st := StoredState{Subject: "s"}
			if err := decodeEnvelope(old, &st); err != nil {
				t.Fatal(err)
			}
			if got := envelopeJSON(t, st); !bytes.Equal(got, want) {
				t.Fatalf("decoded envelope:\n got %s\nwant %s", got, want)
			}
			cur, err := encodeEnvelope(st)
			if err != nil {
				t.Fatal(err)
			}
			if id := frameDict(t, cur); id != StateDictionary {
				t.Errorf("new frame names dictionary %d, want %d", id, StateDictionary)
			}
			if len(cur) > len(old) {
				t.Errorf("new frame %d bytes, old %d", len(cur), len(old))
			}
			again := StoredState{Subject: "s"}
			if err := decodeEnvelope(cur, &again); err != nil {
				t.Fatal(err)
			}
			if got := envelopeJSON(t, again); !bytes.Equal(got, want) {
				t.Fatalf("re-encoded envelope:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestEnvelopeUnknownDictionary: a frame compressed with a dictionary the
// decoder does not know is an error, not a wrong state.
func TestEnvelopeUnknownDictionary(t *testing.T) {
	other, err := zstd.NewWriter(nil, zstd.WithEncoderDict(rewriteDictID(t, stateDict40001, 40999)))
	if err != nil {
		t.Fatal(err)
	}
	frame := other.EncodeAll([]byte(`{"s":{},"a":[]}`), nil)
	st := StoredState{Subject: "s"}
	if err := decodeEnvelope(frame, &st); err == nil {
		t.Fatal("decoded a frame of an unknown dictionary")
	}
}

// rewriteDictID returns a copy of a zstd dictionary under another id.
func rewriteDictID(t *testing.T, d []byte, id uint32) []byte {
	t.Helper()
	out := append([]byte(nil), d...)
	binary.LittleEndian.PutUint32(out[4:8], id)
	return out
}

func frameDict(t *testing.T, frame []byte) uint32 {
	t.Helper()
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		t.Fatal(err)
	}
	return h.DictionaryID
}

func envelopeJSON(t *testing.T, st StoredState) []byte {
	t.Helper()
	rows, err := appliedRows(st.Applied)
	if err != nil {
		t.Fatal(err)
	}
	b, err := marshalEnvelope(st.State, rows, st.ItemVersions)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
