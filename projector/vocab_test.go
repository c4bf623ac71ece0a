package projector

import (
	"slices"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// TestStatusVocabularies checks that the status precedences the folds use
// rank exactly the statuses schema declares (and the query package
// validates against), in lifecycle order.
func TestStatusVocabularies(t *testing.T) {
	cases := []struct {
		name string
		prec Precedence
		want []string
	}{
		{"jobs", jobStatuses, schema.JobStatuses()},
		{"messages", messageStatuses, schema.MessageStatuses()},
	}
	for _, c := range cases {
		got := make([]string, 0, len(c.prec))
		for s := range c.prec {
			got = append(got, s)
		}
		// Lifecycle order: by rank, ties in schema's order.
		slices.SortStableFunc(got, func(a, b string) int {
			if d := c.prec[a] - c.prec[b]; d != 0 {
				return d
			}
			return slices.Index(c.want, a) - slices.Index(c.want, b)
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: precedence ranks %v, schema lists %v", c.name, got, c.want)
		}
	}
}
