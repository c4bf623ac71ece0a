package projector

import (
	"fmt"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// itemOf marshals a typed projection item (one of schema's *Item structs)
// into an Item of table, as attributevalue.MarshalMap does (marshalItem).
// The structs hold only strings, numbers, bools, slices and
// schema.RawValue, which always marshal: an error is a programming error
// of the struct, and every fold's tests would panic.
func itemOf(table string, v any) Item {
	m, err := marshalItem(v)
	if err != nil {
		panic(fmt.Sprintf("projector: marshal %s item %T: %v", table, v, err))
	}
	return Item{Table: table, Item: m}
}

// The setters below fill a typed item's fields so that an unknown value is
// left out: "" for a string or a time, nil for a number or a bool that may
// be 0 or false yet known.

// timeAttr is t as projections store it, "" for the zero time.
func timeAttr(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return schema.FormatItemTime(t)
}

// lwwStr is a register's string, "" while it is unknown.
func lwwStr(r LWW[string]) string {
	if r.Known() {
		return r.V
	}
	return ""
}

// lwwInt is a register's number, 0 while it is unknown (for registers that
// are only ever written with a positive number).
func lwwInt(r LWW[int64]) int64 {
	if r.Known() {
		return r.V
	}
	return 0
}

// lwwPtr is a pointer to a register's value, nil while it is unknown.
func lwwPtr[T any](r LWW[T]) *T {
	if !r.Known() {
		return nil
	}
	v := r.V
	return &v
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
