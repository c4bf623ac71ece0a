package emit

import (
	"fmt"
	"io"
	"strings"

	"github.com/streamfold/streamfold/internal/capacity"
)

// WriteCapacity prints what appending cost (AppendCapacity), for people:
// lines prefixed with what ("emit", "simulate") and the prices' note.
func WriteCapacity(w io.Writer, what string, s capacity.Snapshot) error {
	var b strings.Builder
	s.WriteText(&b, what+": ", "event", s.PerEvent)
	fmt.Fprintf(&b, "%s: prices: %s\n", what, capacity.PriceNote)
	_, err := io.WriteString(w, b.String())
	return err
}
