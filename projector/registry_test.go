package projector

import (
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// TestEveryTypeHasAFold checks the registry from both sides: every event
// type a schema domain declares reaches a registered fold, and every fold
// is of an aggregate some domain declares, with the lifecycle's ranks.
func TestEveryTypeHasAFold(t *testing.T) {
	for _, typ := range schema.Types() {
		k, ok := KindFor(typ)
		if !ok {
			t.Errorf("%s: no fold is registered for its aggregate", typ)
			continue
		}
		if NewAggregate(k) == nil {
			t.Errorf("%s: NewAggregate(%s) is nil", typ, k)
		}
	}
	for k := range folds {
		a, ok := schema.AggregateOf(string(k))
		if !ok {
			t.Errorf("fold %s: no domain declares it", k)
			continue
		}
		p := precedenceOf(k)
		for _, st := range a.Lifecycle {
			if p[st.Name] != st.Rank {
				t.Errorf("fold %s: %s ranks %d, schema says %d", k, st.Name, p[st.Name], st.Rank)
			}
		}
	}
}
