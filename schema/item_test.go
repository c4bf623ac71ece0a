package schema_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// webhookEvents returns the GitHub example webhooks of ingest/testdata as
// validated events, minified as GitHub sends them (7-8 KB each).
func webhookEvents(t testing.TB) []schema.Event {
	t.Helper()
	files, err := filepath.Glob("../ingest/testdata/github/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no webhook fixtures (%v)", err)
	}
	var out []schema.Event
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		if err := json.Compact(&body, raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var head struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(body.Bytes(), &head)
		e := schema.Event{ID: "delivery-" + head.Action, Source: "https://github.com/runs-on", Type: schema.WorkflowJobTypePrefix + head.Action,
			Time: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC), Data: body.Bytes()}
		if _, err := schema.Validate(&e); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		now := e.Time.Add(time.Second)
		e.RecordedAt = &now
		out = append(out, e)
	}
	return out
}

func recorded(t *testing.T, e schema.Event) schema.Event {
	t.Helper()
	if _, err := schema.Validate(&e); err != nil {
		t.Fatal(err)
	}
	now := e.Time.Add(3)
	e.RecordedAt = &now
	return e
}

func TestItemEncodings(t *testing.T) {
	small := recorded(t, testenv.LoadEvents(t, "testdata/valid.ndjson")[0])
	hook := webhookEvents(t)[0]
	dictEnc := schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary)
	tests := []struct {
		name     string
		e        schema.Event
		enc      schema.DataEncoding
		wantEnc  string // "" = stored as text
		maxUnits int
	}{
		{"small payload stays text", small, schema.DataCompressed, "", 1},
		{"small payload, no dictionary, stays text", small, schema.DataCompressedNoDictionary, "", 1},
		{"webhook compressed with the dictionary, URLs elided", hook, schema.DataCompressed, schema.EncodingGitHubURLsPrefix + dictEnc, 1},
		{"webhook compressed with the dictionary, URLs kept", hook, schema.DataCompressedKeepURLs, schema.EncodingZstdDictPrefix + strconv.Itoa(schema.KeepURLsDictionary), 2},
		{"webhook compressed without a dictionary", hook, schema.DataCompressedNoDictionary, schema.EncodingZstd, 3},
		{"webhook plain", hook, schema.DataPlain, "", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item, err := schema.ItemEncoded(tt.e, 14*24*time.Hour, tt.enc)
			if err != nil {
				t.Fatal(err)
			}
			enc, hasEnc := item[schema.AttrDataEncoding].(*types.AttributeValueMemberS)
			switch {
			case tt.wantEnc == "" && hasEnc:
				t.Fatalf("dataenc = %q, want none", enc.Value)
			case tt.wantEnc == "":
				if _, ok := item[schema.AttrData].(*types.AttributeValueMemberS); !ok {
					t.Fatalf("data is %T, want S", item[schema.AttrData])
				}
			case !hasEnc || enc.Value != tt.wantEnc:
				t.Fatalf("dataenc = %v, want %q", item[schema.AttrDataEncoding], tt.wantEnc)
			default:
				if _, ok := item[schema.AttrData].(*types.AttributeValueMemberB); !ok {
					t.Fatalf("data is %T, want B", item[schema.AttrData])
				}
			}
			size := schema.ItemSize(item)
			if u := schema.WriteUnits(size); u > tt.maxUnits {
				t.Errorf("item is %d bytes, %d write units; want at most %d", size, u, tt.maxUnits)
			}
			got, err := schema.EventFromItem(item)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, tt.e.Data) {
				t.Fatalf("data changed:\n got %s\nwant %s", got.Data, tt.e.Data)
			}
			a, _ := json.Marshal(tt.e)
			b, _ := json.Marshal(got)
			if string(a) != string(b) {
				t.Fatalf("round trip\n got: %s\nwant: %s", b, a)
			}
		})
	}
}

// TestItemCompressesOnlyWhenItPays: an item at most one write unit as text
// stays text; one just above is compressed (when that makes it smaller,
// which JSON text of that size always is).
func TestItemCompressesOnlyWhenItPays(t *testing.T) {
	base := recorded(t, testenv.LoadEvents(t, "testdata/valid.ndjson")[0])
	withText := func(text string) schema.Event {
		e := base
		e.Data = json.RawMessage(`{"executionArn":"arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123","pad":"` + text + `"}`)
		return e
	}
	plainSize := func(e schema.Event) int {
		item, err := schema.ItemEncoded(e, 0, schema.DataPlain)
		if err != nil {
			t.Fatal(err)
		}
		return schema.ItemSize(item)
	}
	// Grow a repetitive payload until its plain item is exactly one unit.
	pad := ""
	for plainSize(withText(pad)) < schema.CompressAboveBytes {
		pad += "a"
	}
	tests := []struct {
		name       string
		e          schema.Event
		compressed bool
	}{
		{"exactly one write unit as text", withText(pad), false},
		{"one byte above", withText(pad + "a"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item, err := schema.Item(tt.e, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, compressed := item[schema.AttrDataEncoding]
			if compressed != tt.compressed {
				t.Fatalf("compressed = %v, want %v (plain item %d bytes)", compressed, tt.compressed, plainSize(tt.e))
			}
			if got := schema.ItemSize(item); got > plainSize(tt.e) {
				t.Fatalf("item is %d bytes, more than its plain %d", got, plainSize(tt.e))
			}
			got, err := schema.EventFromItem(item)
			if err != nil || !bytes.Equal(got.Data, tt.e.Data) {
				t.Fatalf("round trip: %v, data %s", err, got.Data)
			}
		})
	}
}

// TestItemLegacyText: items written before compression (data as S, no
// dataenc) decode exactly as before.
func TestItemLegacyText(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	data := `{"message_id":"550e8400-e29b-41d4-a716-446655440000", "stage":"dev","n":1.50e+3}`
	item := map[string]types.AttributeValue{
		"subject": s("messages/550e8400-e29b-41d4-a716-446655440000"), "id": s("legacy"), "specversion": s("1.0"),
		"source": s("rez_agent/dev"), "type": s("rez.message.queued"), "time": s("2025-10-21T14:30:00Z"),
		"data": s(data), "recordedat": s("2025-10-21T14:30:01Z"), "ttl": &types.AttributeValueMemberN{Value: "1762266601"},
	}
	e, err := schema.EventFromItem(item)
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Data) != data {
		t.Fatalf("data = %s, want %s", e.Data, data)
	}
}

func TestEventFromItemDataErrors(t *testing.T) {
	hook := webhookEvents(t)[0]
	good, err := schema.Item(hook, 0)
	if err != nil {
		t.Fatal(err)
	}
	frame := good[schema.AttrData].(*types.AttributeValueMemberB).Value
	enc := good[schema.AttrDataEncoding].(*types.AttributeValueMemberS).Value
	cur := strconv.Itoa(schema.CurrentDictionary)
	noDict, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(true))
	multi, _ := zstd.NewWriter(nil, zstd.WithSingleSegment(false)) // omits the size of small inputs
	huge := noDict.EncodeAll(bytes.Repeat([]byte(" "), schema.MaxDataBytes+1), nil)
	b := func(v []byte) types.AttributeValue { return &types.AttributeValueMemberB{Value: v} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tests := []struct {
		name      string
		data, enc types.AttributeValue // nil enc: attribute absent
		want      string
	}{
		{"binary without encoding", b(frame), nil, `attribute "data": is binary (B) but "dataenc" is missing or not a string (S)`},
		{"encoding not a string", b(frame), &types.AttributeValueMemberN{Value: "1"}, `attribute "data": is binary (B) but "dataenc" is missing or not a string (S)`},
		{"text with encoding", s(string(hook.Data)), s(enc), `attribute "data": is text (S) but "dataenc" is set`},
		{"number", &types.AttributeValueMemberN{Value: "1"}, nil, `attribute "data" must be a string (S) or, compressed, a binary (B)`},
		{"unknown encoding", b(frame), s("gzip"), `attribute "data": unknown encoding "gzip"`},
		{"bad dictionary id", b(frame), s("zstd+dict:x"), `attribute "data": unknown encoding "zstd+dict:x"`},
		{"unknown dictionary", b(frame), s("zstd+dict:40000"), `attribute "data": encoding "zstd+dict:40000": dictionary 40000 is not known to this version of streamfold`},
		{"frame with a dictionary, encoding without", b(frame), s("zstd"), `attribute "data": the zstd frame uses dictionary ` + cur + `, the encoding "zstd" says 0`},
		{"frame without a dictionary, encoding with", b(noDict.EncodeAll(hook.Data, nil)), s(enc), `attribute "data": the zstd frame uses dictionary 0, the encoding "zstd+dict:` + cur + `" says ` + cur},
		{"not zstd", b([]byte(`{"a":1}`)), s("zstd"), `attribute "data": not a zstd frame: invalid input: magic number mismatch`},
		{"empty", b(nil), s("zstd"), `attribute "data": not a zstd frame: unexpected EOF`},
		{"no declared size", b(multi.EncodeAll([]byte(`{"a":1}`), nil)), s("zstd"), `attribute "data": the zstd frame does not declare its size`},
		{"too large", b(huge), s("zstd"), `attribute "data": the zstd frame declares 26214401 bytes, more than MaxDataBytes (26214400)`},
		{"truncated", b(frame[:len(frame)-9]), s(enc), `attribute "data": zstd: unexpected EOF`},
		{"two frames", b(append(noDict.EncodeAll([]byte(`{}`), nil), noDict.EncodeAll([]byte(`{}`), nil)...)), s("zstd"), `attribute "data": the zstd frame declares 2 bytes and holds 4`},
		{"not JSON", b(noDict.EncodeAll([]byte(`{not json`), nil)), s("zstd"), `attribute "data": not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item := map[string]types.AttributeValue{}
			for k, v := range good {
				item[k] = v
			}
			item[schema.AttrData] = tt.data
			delete(item, schema.AttrDataEncoding)
			if tt.enc != nil {
				item[schema.AttrDataEncoding] = tt.enc
			}
			_, err := schema.EventFromItem(item)
			if !errors.Is(err, schema.ErrMalformedItem) {
				t.Fatalf("err = %v, want ErrMalformedItem", err)
			}
			if got := strings.TrimPrefix(err.Error(), schema.ErrMalformedItem.Error()+": "); got != tt.want {
				t.Fatalf("err = %q\nwant  %q", got, tt.want)
			}
		})
	}
}

// TestDictionariesAreFrozen: items compressed with a dictionary exist for as
// long as the table keeps them (and their archive copy for ever), so a
// registered dictionary file must never change. A new dictionary gets a new
// id (go generate ./schema after raising -id).
func TestDictionariesAreFrozen(t *testing.T) {
	frozen := map[string]string{
		"32769.zdict": "37248e5e8753e9dcc532e001df5a3b79f3d3e35dca94ca9c7327668f526da6bf",
		"32770.zdict": "10a57725f18238ae3376e8e6f6c896ea29642702f69308b7a5ea9bb74101a58d",
	}
	files, err := filepath.Glob("zdict/*.zdict")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(frozen) {
		t.Errorf("zdict holds %d dictionaries, the test knows %d: add the new one's sha256 here", len(files), len(frozen))
	}
	for name, want := range frozen {
		b, err := os.ReadFile(filepath.Join("zdict", name))
		if err != nil {
			t.Fatalf("dictionary %s is gone; items compressed with it can no longer be read: %v", name, err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("dictionary %s changed (sha256 %s, want %s); dictionaries are immutable: restore it and train a new id", name, got, want)
		}
	}
	if _, ok := frozen[strconv.Itoa(schema.CurrentDictionary)+".zdict"]; !ok {
		t.Errorf("CurrentDictionary %d has no frozen file", schema.CurrentDictionary)
	}
}

// FuzzItemData: any JSON payload comes out of its item byte for byte, stored
// as text or compressed.
func FuzzItemData(f *testing.F) {
	for _, e := range webhookEvents(f) {
		f.Add([]byte(e.Data))
	}
	f.Add([]byte(`{"size":1e400,"neg":-0.000001,"s":"\u00e9\ud83d\ude00"}`))
	f.Add([]byte(` { "padded" : [ 1 , 2 ] } `))
	f.Add([]byte(`{}`))
	f.Add(bytes.Repeat([]byte(`{"k":"abcdefgh"},`), 200))
	f.Fuzz(func(t *testing.T, payload []byte) {
		if !json.Valid(payload) {
			quoted, _ := json.Marshal(string(payload))
			payload = append(append([]byte(`{"raw":`), quoted...), '}')
		}
		now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		// A long subject puts even a tiny payload above the compression
		// threshold.
		for _, subject := range []string{"x/1", "x/" + strings.Repeat("s", schema.CompressAboveBytes)} {
			e := schema.Event{Subject: subject, ID: "1", Source: "s", Type: "t", Time: now, Data: payload, RecordedAt: &now}
			// DataCompressedNoDictionary is left to TestItemEncodings: its
			// encoder clears large tables on every call, which coverage
			// instrumentation makes too slow to fuzz.
			for _, enc := range []schema.DataEncoding{schema.DataCompressed, schema.DataPlain} {
				item, err := schema.ItemEncoded(e, time.Hour, enc)
				if err != nil {
					t.Fatalf("%s: %v", enc, err)
				}
				got, err := schema.EventFromItem(item)
				if err != nil {
					t.Fatalf("%s: %v", enc, err)
				}
				if !bytes.Equal(got.Data, payload) {
					t.Fatalf("%s: data changed:\n got %q\nwant %q", enc, got.Data, payload)
				}
			}
		}
	})
}

// FuzzEventFromItemBinary: whatever a binary data attribute holds,
// EventFromItem returns valid JSON or ErrMalformedItem, never panics.
func FuzzEventFromItemBinary(f *testing.F) {
	hook := webhookEvents(f)[0]
	item, err := schema.Item(hook, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(item[schema.AttrData].(*types.AttributeValueMemberB).Value, item[schema.AttrDataEncoding].(*types.AttributeValueMemberS).Value)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x11, 0x00, 0x00}, "zstd")
	f.Add([]byte("garbage"), "zstd+dict:32769")
	f.Fuzz(func(t *testing.T, frame []byte, enc string) {
		it := map[string]types.AttributeValue{}
		for k, v := range item {
			it[k] = v
		}
		it[schema.AttrData] = &types.AttributeValueMemberB{Value: frame}
		it[schema.AttrDataEncoding] = &types.AttributeValueMemberS{Value: enc}
		e, err := schema.EventFromItem(it)
		switch {
		case err != nil && !errors.Is(err, schema.ErrMalformedItem):
			t.Fatalf("err = %v, want ErrMalformedItem", err)
		case err == nil && !json.Valid(e.Data):
			t.Fatalf("invalid JSON returned: %q", e.Data)
		}
	})
}

// TestValidateItem: ValidateItem gives what EventFromItem and then Validate
// give, errors included, on valid items and on items whose data is not
// JSON, not a valid payload, or malformed in two ways at once (the checked
// read's first error wins).
func TestValidateItem(t *testing.T) {
	hook := webhookEvents(t)[0]
	good, err := schema.Item(hook, 0)
	if err != nil {
		t.Fatal(err)
	}
	text := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	with := func(set map[string]types.AttributeValue) map[string]types.AttributeValue {
		item := map[string]types.AttributeValue{}
		for k, v := range good {
			item[k] = v
		}
		for k, v := range set {
			if v == nil {
				delete(item, k)
			} else {
				item[k] = v
			}
		}
		return item
	}
	plainData := func(v string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{schema.AttrData: text(v), schema.AttrDataEncoding: nil}
	}
	merge := func(a, b map[string]types.AttributeValue) map[string]types.AttributeValue {
		for k, v := range b {
			a[k] = v
		}
		return a
	}
	tests := []struct {
		name string
		item map[string]types.AttributeValue
	}{
		{"valid, compressed", good},
		{"valid, text", with(plainData(string(hook.Data)))},
		{"data not JSON", with(plainData(`{"action": nope`))},
		{"data not an object", with(plainData(`[1]`))},
		{"data JSON but not the payload", with(plainData(`{"action":"queued"}`))},
		{"data not JSON and an unknown type", with(merge(plainData(`{x`), map[string]types.AttributeValue{schema.AttrEventType: text("nope")}))},
		{"data not JSON and recordedat malformed", with(merge(plainData(`{x`), map[string]types.AttributeValue{schema.AttrRecordedAt: text("yesterday")}))},
		{"no id", with(map[string]types.AttributeValue{schema.AttrID: nil})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantEv, wantItemErr := schema.EventFromItem(tt.item)
			var wantP schema.Payload
			var wantValidErr error
			if wantItemErr == nil {
				wantP, wantValidErr = schema.Validate(&wantEv)
			}
			ev, p, itemErr, validErr := schema.ValidateItem(tt.item)
			if fmt.Sprint(itemErr) != fmt.Sprint(wantItemErr) || fmt.Sprint(validErr) != fmt.Sprint(wantValidErr) {
				t.Fatalf("errors (%v, %v), want (%v, %v)", itemErr, validErr, wantItemErr, wantValidErr)
			}
			if wantItemErr != nil {
				return
			}
			if !reflect.DeepEqual(ev, wantEv) || !reflect.DeepEqual(p, wantP) {
				t.Fatalf("got %+v %+v\nwant %+v %+v", ev, p, wantEv, wantP)
			}
		})
	}
}
