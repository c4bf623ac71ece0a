package archivetools

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/streamfold/streamfold/archiver/queries"
	"github.com/streamfold/streamfold/toolkit"
)

// QueryList are the named Athena queries over the archive, or one.
type QueryList struct {
	Queries []queries.Query
	// One says the list is the one query asked for by name.
	One bool
}

// Queries are every named query, or with name only that one (an
// *toolkit.OptionsError when there is none).
func Queries(name string) (*QueryList, error) {
	if name == "" {
		return &QueryList{Queries: queries.All()}, nil
	}
	q, ok := queries.ByName(name)
	if !ok {
		return nil, toolkit.Invalid("archive queries", "Name", nil, fmt.Sprintf("no query named %q (run `streamfold archive queries` for the list)", name))
	}
	return &QueryList{Queries: []queries.Query{q}, One: true}, nil
}

// MarshalJSON is the list, or the one query.
func (l *QueryList) MarshalJSON() ([]byte, error) {
	if l.One {
		return json.Marshal(l.Queries[0])
	}
	return json.Marshal(l.Queries)
}

// WriteText prints the names and descriptions (cut at 100 characters), or
// the one query's SQL.
func (l *QueryList) WriteText(w io.Writer) error {
	if l.One {
		_, err := fmt.Fprintln(w, l.Queries[0].SQL)
		return err
	}
	return table(w, "NAME\tDESCRIPTION", func(w io.Writer) {
		for _, q := range l.Queries {
			d := q.Description
			if len(d) > 100 {
				d = d[:97] + "..."
			}
			fmt.Fprintf(w, "%s\t%s\n", q.Name, d)
		}
	})
}
