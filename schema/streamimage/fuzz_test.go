package streamimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// decodeLambdaImage json-decodes data as a Lambda stream image. It reports
// false when decoding fails, and also when aws-lambda-go itself panics: its
// UnmarshalJSON type-asserts BS elements without checking (e.g.
// {"a":{"BS":[1]}} panics inside json.Unmarshal), which is not our bug.
func decodeLambdaImage(data []byte) (img map[string]events.DynamoDBAttributeValue, ok bool) {
	defer func() {
		if recover() != nil {
			img, ok = nil, false
		}
	}()
	if err := json.Unmarshal(data, &img); err != nil {
		return nil, false
	}
	return img, true
}

func FuzzLambdaJSON(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`null`,
		`{"id":{"S":"01HZ"},"ttl":{"N":"1719763717"},"amount":{"N":"1e400"},"delta":{"N":"-0.000001"}}`,
		`{"blob":{"B":"AAEC/w=="},"empty":{"B":""},"set":{"BS":["AQ==",""]}}`,
		`{"ok":{"BOOL":true},"no":{"BOOL":false},"gone":{"NULL":true}}`,
		`{"tags":{"SS":["a","b",""]},"nums":{"NS":["1","1e400","-0.000001"]},"none":{"SS":[]}}`,
		`{"data":{"M":{"items":{"L":[{"S":"x"},{"N":"2"},{"M":{}},{"L":[]},{"NULL":true}]}}}}`,
		`{"data":{"S":"{\"ref\":\"refs/heads/main\",\"size\":1e400}"},"recordedat":{"N":"1717171717.123456"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img, ok := decodeLambdaImage(data)
		if !ok {
			t.Skip()
		}
		item, err := FromLambda(img)
		if err != nil {
			// JSON-decoded values are always well formed; only depth can fail.
			var pe *PathError
			if !errors.Is(err, ErrTooDeep) || !errors.As(err, &pe) {
				t.Fatalf("FromLambda: unexpected error %v", err)
			}
			return
		}
		back, err := ToLambda(item)
		if err != nil {
			t.Fatalf("ToLambda: %v", err)
		}
		if !reflect.DeepEqual(back, img) {
			t.Fatalf("Lambda image changed by round trip:\n got %#v\nwant %#v", back, img)
		}
		item2, err := FromLambda(back)
		if err != nil {
			t.Fatalf("second FromLambda: %v", err)
		}
		if !reflect.DeepEqual(item2, item) {
			t.Fatalf("SDK item changed by round trip:\n got %#v\nwant %#v", item2, item)
		}
		wantJSON, err1 := json.Marshal(img)
		gotJSON, err2 := json.Marshal(back)
		if err1 != nil || err2 != nil || !bytes.Equal(gotJSON, wantJSON) {
			t.Fatalf("JSON differs after round trip (%v, %v):\n got %s\nwant %s", err1, err2, gotJSON, wantJSON)
		}
		s, err := ToStreams(item)
		if err != nil {
			t.Fatalf("ToStreams: %v", err)
		}
		item3, err := FromStreams(s)
		if err != nil {
			t.Fatalf("FromStreams: %v", err)
		}
		if !reflect.DeepEqual(item3, item) {
			t.Fatalf("SDK item changed by streams round trip:\n got %#v\nwant %#v", item3, item)
		}
	})
}

// streamGen turns fuzz bytes into a streams image. It deliberately produces
// invalid values too (nil interfaces, typed nil members, unknown union
// members, NULL false, arbitrarily deep nesting) and records which it made so
// the test knows which outcome to expect. When the bytes run out every read
// returns 0, which decodes as an empty S, so generation always terminates.
type streamGen struct {
	b         []byte
	invalid   bool // nil or unknown value somewhere
	nullFalse bool // NULL{Value: false} somewhere
	maxDepth  int
}

func (g *streamGen) next() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *streamGen) bytes() []byte {
	n := int(g.next() % 8)
	switch n {
	case 7:
		return nil
	case 6:
		return []byte{}
	}
	n = min(n, len(g.b))
	out := bytes.Clone(g.b[:n])
	g.b = g.b[n:]
	return out
}

func (g *streamGen) str() string { return string(g.bytes()) }

func (g *streamGen) strs() []string {
	n := int(g.next() % 5)
	if n == 4 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = g.str()
	}
	return out
}

func (g *streamGen) image(depth int) map[string]streamtypes.AttributeValue {
	n := int(g.next() % 5)
	if n == 4 {
		return nil
	}
	m := make(map[string]streamtypes.AttributeValue, n)
	for range n {
		// Keys must be unique: overwriting one would drop a generated value
		// that the invalid/nullFalse/maxDepth bookkeeping already counted.
		k := g.str()
		for _, dup := m[k]; dup; _, dup = m[k] {
			k += "~"
		}
		m[k] = g.value(depth)
	}
	return m
}

func (g *streamGen) value(depth int) streamtypes.AttributeValue {
	g.maxDepth = max(g.maxDepth, depth)
	switch g.next() % 16 {
	case 0:
		return &streamtypes.AttributeValueMemberS{Value: g.str()}
	case 1:
		return &streamtypes.AttributeValueMemberN{Value: g.str()}
	case 2:
		return &streamtypes.AttributeValueMemberB{Value: g.bytes()}
	case 3:
		return &streamtypes.AttributeValueMemberBOOL{Value: g.next()%2 == 0}
	case 4:
		v := g.next()%4 != 0
		g.nullFalse = g.nullFalse || !v
		return &streamtypes.AttributeValueMemberNULL{Value: v}
	case 5:
		return &streamtypes.AttributeValueMemberSS{Value: g.strs()}
	case 6:
		return &streamtypes.AttributeValueMemberNS{Value: g.strs()}
	case 7:
		n := int(g.next() % 4)
		if n == 3 {
			return &streamtypes.AttributeValueMemberBS{}
		}
		bs := make([][]byte, n)
		for i := range bs {
			bs[i] = g.bytes()
		}
		return &streamtypes.AttributeValueMemberBS{Value: bs}
	case 8, 9, 10:
		return &streamtypes.AttributeValueMemberM{Value: g.image(depth + 1)}
	case 11, 12:
		n := int(g.next() % 4)
		if n == 3 {
			return &streamtypes.AttributeValueMemberL{}
		}
		l := make([]streamtypes.AttributeValue, n)
		for i := range l {
			l[i] = g.value(depth + 1)
		}
		return &streamtypes.AttributeValueMemberL{Value: l}
	case 13:
		g.invalid = true
		return nil
	case 14:
		g.invalid = true
		return (*streamtypes.AttributeValueMemberL)(nil)
	default:
		g.invalid = true
		return &streamtypes.UnknownUnionMember{Tag: g.str(), Value: g.bytes()}
	}
}

func FuzzStreamsRoundTrip(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 'i', 'd', 0, 5, 'u', 's', 'e', 'r', 's'})          // {"id": S}
	f.Add([]byte{1, 1, 'n', 1, 5, '1', 'e', '4', '0', '0'})               // {"n": N 1e400}
	f.Add([]byte{2, 1, 'a', 8, 2, 1, 'b', 11, 2, 4, 1, 2, 3, 1, 'c', 15}) // nested M/L with NULL and B
	f.Add([]byte{1, 1, 'x', 4, 0})                                        // NULL false
	f.Add([]byte{2, 1, 'a', 13, 1, 'b', 15, 1, 'T', 0})                   // nil value and unknown member
	f.Add(append([]byte{1, 1, 'd'}, bytes.Repeat([]byte{11, 1}, 40)...))  // 40 nested lists
	f.Add(append([]byte{1, 1, 'd'}, bytes.Repeat([]byte{11, 1}, 31)...))  // exactly MaxDepth
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &streamGen{b: data}
		img := g.image(1)
		wantErr := g.invalid || g.maxDepth > MaxDepth

		item, err := FromStreams(img)
		if (err != nil) != wantErr {
			t.Fatalf("FromStreams error = %v, want error: %v (invalid=%v depth=%d)", err, wantErr, g.invalid, g.maxDepth)
		}
		if err != nil {
			assertKnownError(t, err)
			return
		}
		back, err := ToStreams(item)
		if err != nil {
			t.Fatalf("ToStreams: %v", err)
		}
		if !reflect.DeepEqual(back, img) {
			t.Fatalf("streams image changed by round trip:\n got %#v\nwant %#v", back, img)
		}

		limg, err := ToLambda(item)
		if (err != nil) != g.nullFalse {
			t.Fatalf("ToLambda error = %v, want error: %v", err, g.nullFalse)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidNull) {
				t.Fatalf("ToLambda: unexpected error %v", err)
			}
			return
		}
		item2, err := FromLambda(limg)
		if err != nil {
			t.Fatalf("FromLambda: %v", err)
		}
		if !reflect.DeepEqual(item2, item) {
			t.Fatalf("SDK item changed by Lambda round trip:\n got %#v\nwant %#v", item2, item)
		}
	})
}

func assertKnownError(t *testing.T, err error) {
	t.Helper()
	var pe *PathError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *PathError", err, err)
	}
	for _, sentinel := range []error{ErrNilValue, ErrUnsupportedType, ErrTooDeep} {
		if errors.Is(err, sentinel) {
			if want := fmt.Sprintf("streamimage: attribute %q: %v", pe.Path, sentinel); err.Error() != want {
				t.Fatalf("message %q, want %q", err, want)
			}
			return
		}
	}
	t.Fatalf("unexpected error %v", err)
}
