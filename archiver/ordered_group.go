package archiver

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// orderedGroup is a Parquet group whose fields keep the order they are given in
// (parquet.Group sorts them by name): files list their columns in the order
// of Tables().
type orderedGroup struct{ fields []parquet.Field }

func (g *orderedGroup) ID() int { return 0 }
func (g *orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}
func (g *orderedGroup) Type() parquet.Type                  { return parquet.Group{}.Type() }
func (g *orderedGroup) Optional() bool                      { return false }
func (g *orderedGroup) Repeated() bool                      { return false }
func (g *orderedGroup) Required() bool                      { return true }
func (g *orderedGroup) Leaf() bool                          { return false }
func (g *orderedGroup) Fields() []parquet.Field             { return g.fields }
func (g *orderedGroup) Encoding() encoding.Encoding         { return nil }
func (g *orderedGroup) Compression() compress.Codec         { return nil }
func (g *orderedGroup) GoType() reflect.Type                { return groupGoType(g.fields) }
func (f *orderedField) Name() string                        { return f.name }
func (f *orderedField) Value(v reflect.Value) reflect.Value { return v.Field(f.index) }

type orderedField struct {
	parquet.Node
	name  string
	index int
}

func groupGoType(fields []parquet.Field) reflect.Type {
	sf := make([]reflect.StructField, len(fields))
	for i, f := range fields {
		sf[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: f.GoType(), Tag: reflect.StructTag(`parquet:"` + f.Name() + `"`)}
	}
	return reflect.StructOf(sf)
}
