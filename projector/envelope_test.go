package projector

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfold/streamfold/schema"
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
		{"keys to escape, nil maps", mustMarshal(t, map[string]any{"x": 1}), []appliedRow{
			{T: "m<&>", K: map[string]string{"pk": "a\"b\u2028", "\x01k": "\xff"}, C: map[string]int64{"z": -1, "a": 1 << 60}, S: map[string]int{}},
			{T: "t", K: nil, C: nil, S: map[string]int{"b": 2, "a": -1}},
			{T: "", K: map[string]string{}, C: map[string]int64{}},
		}, map[string]int64{"é": 1, "<": 0, "": -7}},
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

// TestOldEnvelopes: stored states of every envelope version, as the
// encoder of their time wrote them (testdata/envelope/v<N>-<kind>.zst or
// .raw, with the envelope JSON they hold beside them), decode to that JSON;
// stored again (stateItem), they decode to the same JSON, small ones raw
// and the others compressed with StateDictionary, never in more bytes than
// before. Versions: 0, zstd frames without a dictionary (one of each of
// the 4 kinds); 1, frames of dictionary StateDictionary; 2, the JSON as is.
func TestOldEnvelopes(t *testing.T) {
	frames, err := filepath.Glob(filepath.Join("testdata", "envelope", "v*-*.*"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		dict uint32 // the dictionary the frame names
		raw  bool   // stored as JSON, not a frame
	}{
		"v0": {dict: 0},
		"v1": {dict: StateDictionary},
		"v2": {raw: true},
	}
	count := map[string]int{}
	for _, path := range frames {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		version, _, _ := strings.Cut(filepath.Base(path), "-")
		count[version]++
		t.Run(filepath.Base(path), func(t *testing.T) {
			tt, ok := tests[version]
			if !ok {
				t.Fatalf("unknown envelope version %q", version)
			}
			old, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(path, filepath.Ext(path)) + ".json")
			if err != nil {
				t.Fatal(err)
			}
			want = bytes.TrimSuffix(want, []byte("\n"))
			switch {
			case tt.raw != isRawEnvelope(old):
				t.Fatalf("raw = %v, want %v", isRawEnvelope(old), tt.raw)
			case !tt.raw && frameDict(t, old) != tt.dict:
				t.Fatalf("frame names dictionary %d, want %d", frameDict(t, old), tt.dict)
			}
			st := StoredState{Subject: "s", Kind: "k", Version: 1}
			if err := decodeEnvelope(old, &st); err != nil {
				t.Fatal(err)
			}
			if got := envelopeJSON(t, st); !bytes.Equal(got, want) {
				t.Fatalf("decoded envelope:\n got %s\nwant %s", got, want)
			}
			it, err := stateItem(StatePut{StoredState: st})
			if err != nil {
				t.Fatal(err)
			}
			cur := it["state"].(*types.AttributeValueMemberB).Value
			rawSize := ItemSize(it) - len(cur) + len(want) // the item with the JSON as is
			if small := rawSize <= schema.WriteUnitBytes; isRawEnvelope(cur) != small {
				t.Errorf("stored again raw = %v; as JSON the item is %d bytes", isRawEnvelope(cur), rawSize)
			}
			if !isRawEnvelope(cur) {
				if id := frameDict(t, cur); id != StateDictionary {
					t.Errorf("new frame names dictionary %d, want %d", id, StateDictionary)
				}
				if len(cur) > len(old) {
					t.Errorf("new frame %d bytes, old %d", len(cur), len(old))
				}
			}
			again := StoredState{Subject: "s"}
			if err := decodeEnvelope(cur, &again); err != nil {
				t.Fatal(err)
			}
			if got := envelopeJSON(t, again); !bytes.Equal(got, want) {
				t.Fatalf("stored again:\n got %s\nwant %s", got, want)
			}
		})
	}
	if count["v0"] < 4 || count["v1"] < 1 || count["v2"] < 1 {
		t.Fatalf("want old envelopes of version 0 (each of the 4 kinds), 1 and 2, found %v", count)
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
