package projector

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

// itemTypes are every projection item struct a fold marshals (itemOf),
// and whether marshalItem must encode it itself (the hot ones) rather
// than hand it to attributevalue.MarshalMap.
var itemTypes = []struct {
	name string
	new  func() any
	own  bool
}{
	{"JobItem", func() any { return &schema.JobItem{} }, true},
	{"RunJobItem", func() any { return &schema.RunJobItem{} }, true},
	{"RunItem", func() any { return &schema.RunItem{} }, true},
	{"DeploymentItem", func() any { return &schema.DeploymentItem{} }, true},
	{"ExecutionItem", func() any { return &schema.ExecutionItem{} }, true},
	{"MessageMetricsItem", func() any { return &schema.MessageMetricsItem{} }, true},
	{"WorkflowMetricsItem", func() any { return &schema.WorkflowMetricsItem{} }, true},
	{"WorkflowExecutionItem", func() any { return &schema.WorkflowExecutionItem{} }, true},
	{"AlbumItem", func() any { return &schema.AlbumItem{} }, false},
	{"TaskItem", func() any { return &schema.TaskItem{} }, false},
	{"MessageItem", func() any { return &schema.MessageItem{} }, false},
}

// fillRandom sets every field of v (recursively) to a value drawn from r:
// zero values (which omitempty leaves out), -0.0, empty and nil slices,
// nil and non-nil pointers among them.
func fillRandom(r *rand.Rand, v reflect.Value) { fillWith(r, v, nil) }

// fillWith fills v at random like fillRandom; special, when not nil, fills
// the values it knows first (it returns true for those), at every depth.
func fillWith(r *rand.Rand, v reflect.Value, special func(*rand.Rand, reflect.Value) bool) {
	if special != nil && special(r, v) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillWith(r, v.Field(i), special)
			}
		}
	case reflect.Map:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillWith(r, k, special)
			fillWith(r, e, special)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillWith(r, p.Elem(), special)
		v.Set(p)
	case reflect.Slice:
		switch r.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+r.IntN(3), 3)
			for i := 0; i < s.Len(); i++ {
				fillWith(r, s.Index(i), special)
			}
			v.Set(s)
		}
	case reflect.Interface:
		if v.Type() == reflect.TypeFor[types.AttributeValue]() {
			v.Set(reflect.ValueOf(types.AttributeValue(&types.AttributeValueMemberS{Value: "p"})))
		}
	case reflect.String:
		if v.Type() == reflect.TypeFor[json.Number]() {
			v.SetString([]string{"", "0", "1.5", "-12", "1e3"}[r.IntN(5)])
			return
		}
		v.SetString([]string{"", "a", "job x", "é\u2028<&>", "0"}[r.IntN(5)])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt([]int64{0, 1, -1, 42, math.MaxInt32, -1 << 40}[r.IntN(6)])
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 123456.789}[r.IntN(6)])
	}
}

// checkLikeMarshalMap fails unless marshalItem gives MarshalMap's map.
func checkLikeMarshalMap(t *testing.T, what string, v any) {
	t.Helper()
	want, wantErr := attributevalue.MarshalMap(v)
	got, err := marshalItem(v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s: marshalItem error %v, MarshalMap error %v", what, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: marshalItem(%+v)\n got %#v\nwant %#v", what, v, got, want)
	}
}

func TestMarshalItemLikeMarshalMap(t *testing.T) {
	for _, tc := range itemTypes {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.new()
			if own := codecOf(reflect.TypeOf(v).Elem()) != nil; own != tc.own {
				t.Fatalf("marshalItem encodes %s itself: %v, want %v", tc.name, own, tc.own)
			}
			checkLikeMarshalMap(t, "zero value", v)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 500 {
				v := tc.new()
				fillRandom(r, reflect.ValueOf(v).Elem())
				checkLikeMarshalMap(t, fmt.Sprint("random value ", i), v)
				checkLikeMarshalMap(t, fmt.Sprint("random value ", i, " (not a pointer)"), reflect.ValueOf(v).Elem().Interface())
			}
		})
	}
}

func TestMarshalItemOfFolds(t *testing.T) {
	// The items of real folds (a job with its run share, an execution, a
	// message) are what itemOf marshals in production.
	items := []any{
		&schema.JobItem{PK: "JOB#1#2", SK: "v", InstallationID: 1, JobID: 2, Labels: []string{"self-hosted", "linux"}, UsageInSeconds: "12.5", RepoIsPrivate: ptr(false), InternalQueueDurationInMs: ptr(int64(0))},
		&schema.ExecutionItem{},
		&schema.RunJobItem{},
	}
	for _, it := range items {
		checkLikeMarshalMap(t, reflect.TypeOf(it).String(), it)
		checkLikeMarshalMap(t, reflect.TypeOf(it).String()+" (not a pointer)", reflect.ValueOf(it).Elem().Interface())
	}
}

func FuzzMarshalItem(f *testing.F) {
	f.Add(uint8(0), []byte("seed"))
	f.Add(uint8(1), []byte{0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, kind uint8, seed []byte) {
		h := fnv.New64a()
		h.Write(seed)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], h.Sum64())
		r := rand.New(rand.NewChaCha8([32]byte(append(b[:], make([]byte, 24)...))))
		tc := itemTypes[int(kind)%len(itemTypes)]
		v := tc.new()
		fillRandom(r, reflect.ValueOf(v).Elem())
		checkLikeMarshalMap(t, tc.name, v)
		checkLikeMarshalMap(t, tc.name+" (not a pointer)", reflect.ValueOf(v).Elem().Interface())
	})
}
