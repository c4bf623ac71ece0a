package schema

import "time"

// ItemTimeLayout is the layout of every time attribute of a projection item
// (created_at, updated_at, completed_at, ...): ISO 8601 in UTC with
// milliseconds. The projector writes it and the query side compares key
// conditions against it, so both format through FormatItemTime.
const ItemTimeLayout = "2006-01-02T15:04:05.000Z"

// FormatItemTime formats t as projection items store it: converted to UTC,
// in ItemTimeLayout (sub-millisecond digits are dropped, not rounded).
func FormatItemTime(t time.Time) string { return t.UTC().Format(ItemTimeLayout) }
