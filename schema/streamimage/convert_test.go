package streamimage

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// sampleValues covers every type, nested containers and the nil/empty edge
// cases that must survive a round trip unchanged.
func sampleValues() []struct {
	name string
	v    types.AttributeValue
} {
	return []struct {
		name string
		v    types.AttributeValue
	}{
		{"S", &types.AttributeValueMemberS{Value: "hello, wörld"}},
		{"S empty", &types.AttributeValueMemberS{Value: ""}},
		{"N integer", &types.AttributeValueMemberN{Value: "1717171717"}},
		{"N huge exponent", &types.AttributeValueMemberN{Value: "1e400"}},
		{"N tiny negative", &types.AttributeValueMemberN{Value: "-0.000001"}},
		{"N 38 digits", &types.AttributeValueMemberN{Value: "12345678901234567890123456789012345678"}},
		{"N trailing zeros", &types.AttributeValueMemberN{Value: "1.500"}},
		{"B", &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 0xff}}},
		{"B empty", &types.AttributeValueMemberB{Value: []byte{}}},
		{"B nil", &types.AttributeValueMemberB{}},
		{"BOOL true", &types.AttributeValueMemberBOOL{Value: true}},
		{"BOOL false", &types.AttributeValueMemberBOOL{Value: false}},
		{"NULL", &types.AttributeValueMemberNULL{Value: true}},
		{"SS", &types.AttributeValueMemberSS{Value: []string{"b", "a", "c"}}},
		{"SS empty", &types.AttributeValueMemberSS{Value: []string{}}},
		{"SS nil", &types.AttributeValueMemberSS{}},
		{"NS", &types.AttributeValueMemberNS{Value: []string{"1", "1e400", "-0.000001"}}},
		{"NS empty", &types.AttributeValueMemberNS{Value: []string{}}},
		{"BS", &types.AttributeValueMemberBS{Value: [][]byte{{1}, {}, nil, {2, 3}}}},
		{"BS empty", &types.AttributeValueMemberBS{Value: [][]byte{}}},
		{"L", &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "x"},
			&types.AttributeValueMemberN{Value: "2"},
			&types.AttributeValueMemberNULL{Value: true},
		}}},
		{"L empty", &types.AttributeValueMemberL{Value: []types.AttributeValue{}}},
		{"L nil", &types.AttributeValueMemberL{}},
		{"M", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"a": &types.AttributeValueMemberS{Value: "x"},
			"":  &types.AttributeValueMemberBOOL{Value: true},
		}}},
		{"M empty", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}},
		{"M nil", &types.AttributeValueMemberM{}},
		{"nested", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"items": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"sku":  &types.AttributeValueMemberS{Value: "A-1"},
					"qty":  &types.AttributeValueMemberN{Value: "3"},
					"tags": &types.AttributeValueMemberSS{Value: []string{"red"}},
					"blob": &types.AttributeValueMemberBS{Value: [][]byte{[]byte("z")}},
				}},
				&types.AttributeValueMemberL{Value: []types.AttributeValue{
					&types.AttributeValueMemberNULL{Value: true},
					&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
				}},
			}},
		}}},
		{"max depth", nest(MaxDepth)},
	}
}

// nest returns a value at nesting level depth when used as a top-level
// attribute: depth-1 maps around a string.
func nest(depth int) types.AttributeValue {
	var v types.AttributeValue = &types.AttributeValueMemberS{Value: "leaf"}
	for i := 1; i < depth; i++ {
		v = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"n": v}}
	}
	return v
}

func assertEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

func mustNoErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range sampleValues() {
		t.Run(tc.name, func(t *testing.T) {
			item := map[string]types.AttributeValue{"attr": tc.v}

			lv, err := ToLambdaValue(tc.v)
			mustNoErr(t, "ToLambdaValue", err)
			back, err := FromLambdaValue(lv)
			mustNoErr(t, "FromLambdaValue", err)
			assertEqual(t, "lambda value round trip", back, tc.v)

			limg, err := ToLambda(item)
			mustNoErr(t, "ToLambda", err)
			backItem, err := FromLambda(limg)
			mustNoErr(t, "FromLambda", err)
			assertEqual(t, "lambda image round trip", backItem, item)

			sv, err := ToStreamsValue(tc.v)
			mustNoErr(t, "ToStreamsValue", err)
			back, err = FromStreamsValue(sv)
			mustNoErr(t, "FromStreamsValue", err)
			assertEqual(t, "streams value round trip", back, tc.v)

			simg, err := ToStreams(item)
			mustNoErr(t, "ToStreams", err)
			backItem, err = FromStreams(simg)
			mustNoErr(t, "FromStreams", err)
			assertEqual(t, "streams image round trip", backItem, item)
		})
	}
}

// TestLambdaRoundTrip starts from the Lambda side, including values built
// with nil slices and maps, and checks that Lambda -> SDK -> Lambda is exact.
func TestLambdaRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		av   events.DynamoDBAttributeValue
		want types.AttributeValue
	}{
		{"S", events.NewStringAttribute("s"), &types.AttributeValueMemberS{Value: "s"}},
		{"N", events.NewNumberAttribute("1e400"), &types.AttributeValueMemberN{Value: "1e400"}},
		{"B", events.NewBinaryAttribute([]byte("b")), &types.AttributeValueMemberB{Value: []byte("b")}},
		{"B nil", events.NewBinaryAttribute(nil), &types.AttributeValueMemberB{}},
		{"BOOL", events.NewBooleanAttribute(true), &types.AttributeValueMemberBOOL{Value: true}},
		{"NULL", events.NewNullAttribute(), &types.AttributeValueMemberNULL{Value: true}},
		{"SS", events.NewStringSetAttribute([]string{"a"}), &types.AttributeValueMemberSS{Value: []string{"a"}}},
		{"NS", events.NewNumberSetAttribute([]string{"-0.000001"}), &types.AttributeValueMemberNS{Value: []string{"-0.000001"}}},
		{"BS", events.NewBinarySetAttribute([][]byte{{9}}), &types.AttributeValueMemberBS{Value: [][]byte{{9}}}},
		{"L nil", events.NewListAttribute(nil), &types.AttributeValueMemberL{}},
		{"M nil", events.NewMapAttribute(nil), &types.AttributeValueMemberM{}},
		{"M", events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
			"l": events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewNullAttribute()}),
		}), &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}}},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromLambdaValue(tc.av)
			mustNoErr(t, "FromLambdaValue", err)
			assertEqual(t, "FromLambdaValue", got, tc.want)
			back, err := ToLambdaValue(got)
			mustNoErr(t, "ToLambdaValue", err)
			assertEqual(t, "ToLambdaValue", back, tc.av)
		})
	}
}

func TestNilMaps(t *testing.T) {
	l, err := FromLambda(nil)
	mustNoErr(t, "FromLambda(nil)", err)
	assertEqual(t, "FromLambda(nil)", l, map[string]types.AttributeValue(nil))
	tl, err := ToLambda(nil)
	mustNoErr(t, "ToLambda(nil)", err)
	assertEqual(t, "ToLambda(nil)", tl, map[string]events.DynamoDBAttributeValue(nil))
	s, err := FromStreams(nil)
	mustNoErr(t, "FromStreams(nil)", err)
	assertEqual(t, "FromStreams(nil)", s, map[string]types.AttributeValue(nil))
	ts, err := ToStreams(nil)
	mustNoErr(t, "ToStreams(nil)", err)
	assertEqual(t, "ToStreams(nil)", ts, map[string]streamtypes.AttributeValue(nil))
}

// TestNoAliasing checks that results never share memory with inputs.
func TestNoAliasing(t *testing.T) {
	in := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"b":  &types.AttributeValueMemberB{Value: []byte("abc")},
		"ss": &types.AttributeValueMemberSS{Value: []string{"x"}},
	}}
	lv, err := ToLambdaValue(in)
	mustNoErr(t, "ToLambdaValue", err)
	lv.Map()["b"].Binary()[0] = 'Z'
	lv.Map()["ss"].StringSet()[0] = "Z"
	sv, err := ToStreamsValue(in)
	mustNoErr(t, "ToStreamsValue", err)
	sv.(*streamtypes.AttributeValueMemberM).Value["b"].(*streamtypes.AttributeValueMemberB).Value[1] = 'Z'
	assertEqual(t, "input after mutating outputs", in, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"b":  &types.AttributeValueMemberB{Value: []byte("abc")},
		"ss": &types.AttributeValueMemberSS{Value: []string{"x"}},
	}})
}

// deepPath is the path of the value at nesting level depth built by nest
// under the top-level attribute "deep".
func deepPath(depth int) string {
	return "deep" + strings.Repeat(".n", depth-1)
}

func TestErrors(t *testing.T) {
	itemsWith := func(bad types.AttributeValue) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"items": &types.AttributeValueMemberL{Value: []types.AttributeValue{
				&types.AttributeValueMemberS{Value: "ok"},
				&types.AttributeValueMemberN{Value: "1"},
				bad,
			}},
		}}}
	}
	streamItemsWith := func(bad streamtypes.AttributeValue) map[string]streamtypes.AttributeValue {
		return map[string]streamtypes.AttributeValue{"data": &streamtypes.AttributeValueMemberM{Value: map[string]streamtypes.AttributeValue{
			"items": &streamtypes.AttributeValueMemberL{Value: []streamtypes.AttributeValue{
				&streamtypes.AttributeValueMemberS{Value: "ok"},
				&streamtypes.AttributeValueMemberN{Value: "1"},
				bad,
			}},
		}}}
	}
	// A list nested far beyond any limit must fail fast, not overflow.
	var veryDeep types.AttributeValue = &types.AttributeValueMemberNULL{Value: true}
	for range 100000 {
		veryDeep = &types.AttributeValueMemberL{Value: []types.AttributeValue{veryDeep}}
	}

	tests := []struct {
		name     string
		call     func() error
		wantIs   error
		wantPath string
		wantMsg  string
	}{
		{
			name:    "zero lambda value",
			call:    func() error { return errOf(FromLambdaValue(events.DynamoDBAttributeValue{})) },
			wantIs:  ErrNilValue,
			wantMsg: `streamimage: attribute "": nil attribute value`,
		},
		{
			name: "zero lambda value nested",
			call: func() error {
				_, err := FromLambda(map[string]events.DynamoDBAttributeValue{
					"data": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{
						"items": events.NewListAttribute([]events.DynamoDBAttributeValue{
							events.NewStringAttribute("ok"), events.NewNullAttribute(), {},
						}),
					}),
				})
				return err
			},
			wantIs:   ErrNilValue,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": nil attribute value`,
		},
		{
			name: "ToLambda unknown union member",
			call: func() error {
				return errOf(ToLambda(itemsWith(&types.UnknownUnionMember{Tag: "X", Value: []byte("{}")})))
			},
			wantIs:   ErrUnsupportedType,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": unsupported attribute value type`,
		},
		{
			name:     "ToLambda nil interface",
			call:     func() error { return errOf(ToLambda(map[string]types.AttributeValue{"a": nil})) },
			wantIs:   ErrNilValue,
			wantPath: "a",
			wantMsg:  `streamimage: attribute "a": nil attribute value`,
		},
		{
			name:     "ToLambda typed nil member",
			call:     func() error { return errOf(ToLambda(itemsWith((*types.AttributeValueMemberM)(nil)))) },
			wantIs:   ErrNilValue,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": nil attribute value`,
		},
		{
			name: "ToLambda NULL false",
			call: func() error {
				return errOf(ToLambda(map[string]types.AttributeValue{"gone": &types.AttributeValueMemberNULL{Value: false}}))
			},
			wantIs:   ErrInvalidNull,
			wantPath: "gone",
			wantMsg:  `streamimage: attribute "gone": NULL attribute value must be true`,
		},
		{
			name:    "ToLambdaValue nil",
			call:    func() error { return errOf(ToLambdaValue(nil)) },
			wantIs:  ErrNilValue,
			wantMsg: `streamimage: attribute "": nil attribute value`,
		},
		{
			name: "ToLambdaValue list element",
			call: func() error {
				return errOf(ToLambdaValue(&types.AttributeValueMemberL{Value: []types.AttributeValue{(*types.AttributeValueMemberS)(nil)}}))
			},
			wantIs:   ErrNilValue,
			wantPath: "[0]",
			wantMsg:  `streamimage: attribute "[0]": nil attribute value`,
		},
		{
			name:     "FromStreams unknown union member",
			call:     func() error { return errOf(FromStreams(streamItemsWith(&streamtypes.UnknownUnionMember{Tag: "X"}))) },
			wantIs:   ErrUnsupportedType,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": unsupported attribute value type`,
		},
		{
			name:     "FromStreams nil interface",
			call:     func() error { return errOf(FromStreams(streamItemsWith(nil))) },
			wantIs:   ErrNilValue,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": nil attribute value`,
		},
		{
			name:    "FromStreamsValue typed nil",
			call:    func() error { return errOf(FromStreamsValue((*streamtypes.AttributeValueMemberBS)(nil))) },
			wantIs:  ErrNilValue,
			wantMsg: `streamimage: attribute "": nil attribute value`,
		},
		{
			name:     "ToStreams unknown union member",
			call:     func() error { return errOf(ToStreams(itemsWith(&types.UnknownUnionMember{Tag: "X"}))) },
			wantIs:   ErrUnsupportedType,
			wantPath: "data.items[2]",
			wantMsg:  `streamimage: attribute "data.items[2]": unsupported attribute value type`,
		},
		{
			name:     "ToLambda too deep",
			call:     func() error { return errOf(ToLambda(map[string]types.AttributeValue{"deep": nest(MaxDepth + 1)})) },
			wantIs:   ErrTooDeep,
			wantPath: deepPath(MaxDepth + 1),
			wantMsg:  `streamimage: attribute "` + deepPath(MaxDepth+1) + `": attribute value nested too deeply`,
		},
		{
			name:     "ToStreams too deep",
			call:     func() error { return errOf(ToStreams(map[string]types.AttributeValue{"deep": nest(MaxDepth + 1)})) },
			wantIs:   ErrTooDeep,
			wantPath: deepPath(MaxDepth + 1),
			wantMsg:  `streamimage: attribute "` + deepPath(MaxDepth+1) + `": attribute value nested too deeply`,
		},
		{
			name:     "ToLambdaValue 100000 levels",
			call:     func() error { return errOf(ToLambdaValue(veryDeep)) },
			wantIs:   ErrTooDeep,
			wantPath: strings.Repeat("[0]", MaxDepth),
			wantMsg:  `streamimage: attribute "` + strings.Repeat("[0]", MaxDepth) + `": attribute value nested too deeply`,
		},
		{
			name: "FromLambda too deep",
			call: func() error {
				var av = events.NewStringAttribute("leaf")
				for range MaxDepth {
					av = events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"n": av})
				}
				_, err := FromLambda(map[string]events.DynamoDBAttributeValue{"deep": av})
				return err
			},
			wantIs:   ErrTooDeep,
			wantPath: deepPath(MaxDepth + 1),
			wantMsg:  `streamimage: attribute "` + deepPath(MaxDepth+1) + `": attribute value nested too deeply`,
		},
		{
			name: "FromStreams too deep",
			call: func() error {
				var v streamtypes.AttributeValue = &streamtypes.AttributeValueMemberS{Value: "leaf"}
				for range MaxDepth {
					v = &streamtypes.AttributeValueMemberM{Value: map[string]streamtypes.AttributeValue{"n": v}}
				}
				_, err := FromStreams(map[string]streamtypes.AttributeValue{"deep": v})
				return err
			},
			wantIs:   ErrTooDeep,
			wantPath: deepPath(MaxDepth + 1),
			wantMsg:  `streamimage: attribute "` + deepPath(MaxDepth+1) + `": attribute value nested too deeply`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatal("expected an error, got nil")
			}
			if got := err.Error(); got != tc.wantMsg {
				t.Errorf("message:\n got %s\nwant %s", got, tc.wantMsg)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(err, %v) = false", tc.wantIs)
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *PathError", err)
			}
			if pe.Path != tc.wantPath {
				t.Errorf("Path = %q, want %q", pe.Path, tc.wantPath)
			}
		})
	}
}

// errOf is the error of a call that returns a value and an error.
func errOf[T any](_ T, err error) error { return err }
