package schema_test

import (
	"slices"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// TestRegistry checks what every domain declares against the rest of the
// schema: each type decodes, each status is in its aggregate's lifecycle,
// each projection table has a spec, and the lists derived from the
// registry agree with it.
func TestRegistry(t *testing.T) {
	var types []string
	for _, d := range schema.Domains() {
		if d.Doc == "" || len(d.Aggregates) == 0 || len(d.Types) == 0 || len(d.Tables) == 0 {
			t.Errorf("%s: incomplete descriptor %+v", d.Domain, d)
		}
		for _, tb := range d.Tables {
			if _, ok := schema.TableSpec(tb); !ok {
				t.Errorf("%s: projection table %q has no spec", d.Domain, tb)
			}
		}
		for _, et := range d.Types {
			types = append(types, et.Type)
			k, ok := schema.KindOf(et.Type)
			if !ok || k.Domain != d.Domain || k.Aggregate != et.Aggregate {
				t.Errorf("%s: KindOf = %+v, %v", et.Type, k, ok)
			}
			if p, err := schema.Decode(schema.Event{Type: et.Type, Data: []byte(`{}`)}); err != nil || p == nil {
				t.Errorf("%s: does not decode: %v", et.Type, err)
			}
			st, ok := schema.StatusOf(et.Type)
			if ok != (et.Status != "") || st != et.Status {
				t.Errorf("%s: StatusOf = %q, %v; declared %q", et.Type, st, ok, et.Status)
			}
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, schema.Types()) {
		t.Errorf("domains declare %v, Types() lists %v", types, schema.Types())
	}
	if a, _ := schema.AggregateOf(schema.AggregateMessage); !slices.Equal(schema.MessageStatuses(), a.Lifecycle.Names()) {
		t.Errorf("MessageStatuses = %v, the lifecycle says %v", schema.MessageStatuses(), a.Lifecycle.Names())
	}
	if got := schema.ProjectionTables(); !slices.Contains(got, schema.TableMetrics) || slices.Contains(got, schema.TableEvents) || slices.Contains(got, schema.TableAggregates) {
		t.Errorf("ProjectionTables = %v", got)
	}
	if _, ok := schema.StatusOf("no.such.type"); ok {
		t.Error("StatusOf knows an unknown type")
	}
	if schema.MessageScope("dev") != "messages/dev" {
		t.Errorf("MessageScope(dev) = %q", schema.MessageScope("dev"))
	}
}
