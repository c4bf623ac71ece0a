package projector

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/zstd"
)

// An aggregate's stored state is an envelope compressed with zstd into a
// Binary attribute (a job's state is ~2.5 KB of JSON, mostly repeated
// stamps, and ~0.35 KB compressed: one write unit instead of three): the
// fold as JSON, the counter contributions that were applied for it, and the
// state version each of its items was last written from.
//
// The attribute's first byte tells the envelope's version. A state whose
// item fits one write unit (WriteUnitBytes) with the envelope's JSON as is
// is stored so (version 2, "raw": the JSON's '{' can never start a zstd
// frame): compressing it could not make the write cheaper, only cost CPU.
// Larger states are zstd frames, and the frame is the version: states are
// compressed with the dictionary StateDictionary (trained on states,
// zdict/<id>.zdict) at zstd's fastest level, without a checksum, and the
// frame header names the dictionary (version 1). States written before it
// existed are frames without a dictionary (zstd's default level, with a
// checksum; version 0); the decoder reads all three, picking the
// dictionary by the id the frame declares, so a new dictionary only needs
// a new file and id (TestOldEnvelopes).
//
// Applied contributions are what makes an upgrade safe: the next change of
// the aggregate writes contributions(new state) minus what was *applied*,
// not minus what the running code would compute from the old state, so a
// deploy that changes Contributions (a new counter, another date rule)
// moves each counter by exactly what it changed. States written before
// applied contributions were recorded fall back to contributions(old state).

// StateDictionary is the id of the zstd dictionary states are compressed
// with (zdict/<id>.zdict). A dictionary is immutable once states
// compressed with it may exist; every one ever used stays registered in
// the decoder (stateDicts).
const StateDictionary = 40001

//go:embed zdict/40001.zdict
var stateDict40001 []byte

// stateDicts are the dictionaries the decoder knows, by the id in their
// header.
var stateDicts = [][]byte{stateDict40001}

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
)

// codecs returns the state encoder and decoder. With the dictionary, the
// fastest level compresses states smaller than the default level did
// without one (355 vs 534 bytes on average over the states of a simulate
// workload, GitHub's full webhooks included) in less CPU time.
func codecs() (*zstd.Encoder, *zstd.Decoder) {
	zstdOnce.Do(func() {
		var err error
		zstdEnc, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderDict(stateDict40001),
			zstd.WithEncoderCRC(false),
			zstd.WithSingleSegment(true),
			zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err)
		}
		zstdDec, err = zstd.NewReader(nil,
			zstd.WithDecoderDicts(stateDicts...),
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			panic(err)
		}
	})
	return zstdEnc, zstdDec
}

// compressState returns the zstd frame of a state's JSON.
func compressState(state []byte) []byte {
	enc, _ := codecs()
	return enc.EncodeAll(state, make([]byte, 0, len(state)/3+16))
}

// isRawEnvelope reports whether a stored state is the envelope's JSON as
// is (version 2) rather than a zstd frame, whose magic number starts with
// 0x28 (a skippable frame's with 0x5?), never with the JSON's '{'.
func isRawEnvelope(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// decompressState returns the envelope's JSON of a stored state: a raw
// envelope as is, a zstd frame (compressState's, or an older encoder's)
// decompressed.
func decompressState(b []byte) ([]byte, error) {
	if isRawEnvelope(b) {
		return b, nil
	}
	_, dec := codecs()
	return dec.DecodeAll(b, nil)
}

// appliedRow is one applied contribution as stored: table, key (all key
// attributes of counter rows are strings), non-zero counters and scales.
type appliedRow struct {
	T string            `json:"t"`
	K map[string]string `json:"k"`
	C map[string]int64  `json:"c"`
	S map[string]int    `json:"s,omitempty"`
}

// appliedRows renders contributions for the state, rows sorted.
func appliedRows(cs []Contribution) ([]appliedRow, error) {
	rows := make([]appliedRow, 0, len(cs))
	for _, c := range cs {
		r := appliedRow{T: c.Table, K: map[string]string{}, C: map[string]int64{}}
		for k, v := range c.Key {
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				return nil, fmt.Errorf("projector: counter row %s: key attribute %s is not a string", c.RowID(), k)
			}
			r.K[k] = s.Value
		}
		for k, v := range c.Counters {
			if v != 0 {
				r.C[k] = v
				if sc := c.Scale[k]; sc != 0 {
					if r.S == nil {
						r.S = map[string]int{}
					}
					r.S[k] = sc
				}
			}
		}
		if len(r.C) > 0 {
			rows = append(rows, r)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rowIDOf(rows[i]) < rowIDOf(rows[j]) })
	return rows, nil
}

func rowIDOf(r appliedRow) string { return r.contribution().RowID() }

func (r appliedRow) contribution() Contribution {
	c := Contribution{Table: r.T, Key: map[string]types.AttributeValue{}, Counters: r.C, Scale: r.S}
	for k, v := range r.K {
		c.Key[k] = avS(v)
	}
	return c
}

// envelope is what the state attribute holds, before compression.
type envelope struct {
	State   json.RawMessage  `json:"s"`
	Applied []appliedRow     `json:"a"`
	Items   map[string]int64 `json:"i,omitempty"`
}

// encodeEnvelope renders a state's envelope JSON (stateItem stores it raw
// or compressed).
func encodeEnvelope(st StoredState) ([]byte, error) {
	rows, err := appliedRows(st.Applied)
	if err != nil {
		return nil, err
	}
	b, err := marshalEnvelope(st.State, rows, st.ItemVersions)
	if err != nil {
		return nil, fmt.Errorf("projector: encode state of %s: %w", st.Subject, err)
	}
	return b, nil
}

// marshalEnvelope is json.Marshal(envelope{...}) without its second pass
// over the state: json.Marshal compacts and validates a RawMessage again,
// while state is json.Marshal's own output already (compact, HTML-escaped),
// so it is copied as is; the applied rows and the item versions are written
// without reflection (jsonWriter). The bytes are the same
// (TestMarshalEnvelope).
func marshalEnvelope(state json.RawMessage, rows []appliedRow, items map[string]int64) ([]byte, error) {
	if len(state) == 0 {
		return json.Marshal(envelope{State: state, Applied: rows, Items: items})
	}
	w := jsonWriter{b: make([]byte, 0, len(state)+len(rows)*128+16+len(items)*48)}
	w.b = append(w.b, `{"s":`...)
	w.b = append(w.b, state...)
	w.b = append(w.b, `,"a":`...)
	if rows == nil {
		w.b = append(w.b, "null"...)
	} else {
		w.b = append(w.b, '[')
		for i, r := range rows {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			outer := w.open()
			w.key("t")
			w.string(r.T)
			w.key("k")
			writeMap(&w, r.K, w.string)
			w.key("c")
			writeMap(&w, r.C, w.int)
			if len(r.S) > 0 {
				w.key("s")
				writeMap(&w, r.S, func(v int) { w.int(int64(v)) })
			}
			w.close(outer)
		}
		w.b = append(w.b, ']')
	}
	if len(items) > 0 {
		w.b = append(w.b, `,"i":`...)
		writeMap(&w, items, w.int)
	}
	if !w.ok() {
		return json.Marshal(envelope{State: state, Applied: rows, Items: items})
	}
	return append(w.b, '}'), nil
}

// writeMap writes a map with string keys as encoding/json does: keys
// sorted, null when nil.
func writeMap[V any](w *jsonWriter, m map[string]V, value func(V)) {
	if m == nil {
		w.b = append(w.b, "null"...)
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	outer := w.open()
	for _, k := range keys {
		if w.comma {
			w.b = append(w.b, ',')
		}
		w.comma = true
		w.string(k)
		w.b = append(w.b, ':')
		value(m[k])
	}
	w.close(outer)
}

// decodeEnvelope undoes encodeEnvelope into st.
func decodeEnvelope(b []byte, st *StoredState) error {
	raw, err := decompressState(b)
	if err != nil {
		return fmt.Errorf("projector: aggregate %s: decompress state: %w", st.Subject, err)
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("projector: aggregate %s: decode state: %w", st.Subject, err)
	}
	st.State = []byte(env.State)
	st.Applied = make([]Contribution, len(env.Applied))
	for i, r := range env.Applied {
		st.Applied[i] = r.contribution()
	}
	st.HasApplied = true
	st.ItemVersions = env.Items
	return nil
}
