package projector

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// marshalItem is attributevalue.MarshalMap(v) for one of schema's item
// structs (or a pointer to one), without the SDK encoder's per-call reflection
// over tags and its generic paths: each struct type is compiled once into
// a list of field encoders (itemCodec). The result is the same map
// (TestMarshalItemLikeMarshalMap, FuzzMarshalItem). A struct holding a
// field kind the codec does not know (a custom marshaler such as
// schema.RawValue, a nested struct, a map) goes through MarshalMap as a
// whole, so the codec never has to be right about what it does not handle.
func marshalItem(v any) (map[string]types.AttributeValue, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() == reflect.Struct {
		if c := codecOf(rv.Type()); c != nil {
			return c.encode(rv), nil
		}
	}
	return attributevalue.MarshalMap(v)
}

// itemCodec encodes one struct type: its fields in declaration order
// (embedded structs' fields in place), each with its attribute name.
type itemCodec struct {
	fields []fieldCodec
}

// fieldCodec encodes one field: enc returns nil when the field is left out.
type fieldCodec struct {
	name  string
	index []int
	enc   func(reflect.Value) types.AttributeValue
}

var itemCodecs sync.Map // reflect.Type -> *itemCodec (nil: use MarshalMap)

// codecOf returns the compiled codec of a struct type, nil when the type
// holds a field kind the codec does not handle.
func codecOf(t reflect.Type) *itemCodec {
	if c, ok := itemCodecs.Load(t); ok {
		return c.(*itemCodec)
	}
	var c *itemCodec
	if fs, ok := compileFields(t, nil); ok && uniqueNames(fs) {
		c = &itemCodec{fields: fs}
	}
	itemCodecs.Store(t, c)
	return c
}

func (c *itemCodec) encode(v reflect.Value) map[string]types.AttributeValue {
	m := make(map[string]types.AttributeValue, len(c.fields))
	for _, f := range c.fields {
		fv := v.Field(f.index[0])
		for _, i := range f.index[1:] {
			fv = fv.Field(i)
		}
		if av := f.enc(fv); av != nil {
			m[f.name] = av
		}
	}
	return m
}

// uniqueNames reports whether no two fields share an attribute name (the
// SDK's rules for such clashes, those of encoding/json, are not copied).
func uniqueNames(fs []fieldCodec) bool {
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if seen[f.name] {
			return false
		}
		seen[f.name] = true
	}
	return true
}

var (
	jsonNumberType = reflect.TypeFor[json.Number]()
	marshalerType  = reflect.TypeFor[attributevalue.Marshaler]()
)

// compileFields lists the fields of struct type t (at index prefix) and
// whether every one of them is of a kind the codec handles.
func compileFields(t reflect.Type, prefix []int) ([]fieldCodec, bool) {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil, false
	}
	var out []fieldCodec
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("dynamodbav"), ",")
		if name == "-" {
			continue
		}
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous {
			if name != "" || sf.Type.Kind() != reflect.Struct {
				return nil, false
			}
			fs, ok := compileFields(sf.Type, index)
			if !ok {
				return nil, false
			}
			out = append(out, fs...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		omit := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "":
			case "omitempty":
				omit = true
			default:
				return nil, false // stringset, unixtime, nullempty, ...: the SDK's
			}
		}
		enc, ok := fieldEncoder(sf.Type, omit)
		if !ok {
			return nil, false
		}
		out = append(out, fieldCodec{name: name, index: index, enc: enc})
	}
	return out, true
}

// fieldEncoder returns the encoder of a field of type t, as the SDK's
// encoder treats it: a zero value is left out with omitempty; without, a
// nil pointer or slice is NULL and any other zero value is encoded as
// such (S "", N "0", BOOL false).
func fieldEncoder(t reflect.Type, omit bool) (func(reflect.Value) types.AttributeValue, bool) {
	if t.Implements(marshalerType) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType)) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem, ok := scalarEncoder(t.Elem())
		if !ok {
			return nil, false
		}
		return func(v reflect.Value) types.AttributeValue {
			if v.IsNil() {
				if omit {
					return nil
				}
				return &types.AttributeValueMemberNULL{Value: true}
			}
			return elem(v.Elem())
		}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // binary: the SDK's
		}
		elem, ok := scalarEncoder(t.Elem())
		if !ok || t.Elem().Kind() == reflect.Pointer {
			return nil, false
		}
		return func(v reflect.Value) types.AttributeValue {
			if v.IsNil() {
				if omit {
					return nil
				}
				return &types.AttributeValueMemberNULL{Value: true}
			}
			l := make([]types.AttributeValue, v.Len())
			for i := range l {
				l[i] = elem(v.Index(i))
			}
			return &types.AttributeValueMemberL{Value: l}
		}, true
	}
	enc, ok := scalarEncoder(t)
	if !ok {
		return nil, false
	}
	if !omit {
		return enc, true
	}
	return func(v reflect.Value) types.AttributeValue {
		if isZeroScalar(v) {
			return nil
		}
		return enc(v)
	}, true
}

// isZeroScalar is the SDK encoder's zero test of a scalar (which, unlike
// reflect.Value.IsZero, counts -0.0 as zero).
func isZeroScalar(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}

// scalarEncoder encodes a string, json.Number, bool, integer or float
// value (never left out: zero values are encoded).
func scalarEncoder(t reflect.Type) (func(reflect.Value) types.AttributeValue, bool) {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.String:
		if t == jsonNumberType {
			return func(v reflect.Value) types.AttributeValue {
				return &types.AttributeValueMemberN{Value: v.String()}
			}, true
		}
		if t.PkgPath() != "" {
			return nil, false // a named string type could be a number (numberer): the SDK's
		}
		return func(v reflect.Value) types.AttributeValue {
			return &types.AttributeValueMemberS{Value: v.String()}
		}, true
	case reflect.Bool:
		return func(v reflect.Value) types.AttributeValue {
			return &types.AttributeValueMemberBOOL{Value: v.Bool()}
		}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) types.AttributeValue {
			return &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Int(), 10)}
		}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value) types.AttributeValue {
			return &types.AttributeValueMemberN{Value: strconv.FormatUint(v.Uint(), 10)}
		}, true
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(v reflect.Value) types.AttributeValue {
			return &types.AttributeValueMemberN{Value: strconv.FormatFloat(v.Float(), 'f', -1, bits)}
		}, true
	}
	return nil, false
}
