package schema_test

import (
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

func TestFormatItemTime(t *testing.T) {
	plus2 := time.FixedZone("UTC+2", 2*60*60)
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"utc whole second", time.Date(2025, 9, 29, 8, 30, 0, 0, time.UTC), "2025-09-29T08:30:00.000Z"},
		{"other zone converted to utc", time.Date(2025, 9, 29, 1, 15, 5, 0, plus2), "2025-09-28T23:15:05.000Z"},
		{"milliseconds kept", time.Date(2025, 1, 2, 3, 4, 5, 678_000_000, time.UTC), "2025-01-02T03:04:05.678Z"},
		{"sub-millisecond truncated", time.Date(2025, 1, 2, 3, 4, 5, 999_999_999, time.UTC), "2025-01-02T03:04:05.999Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schema.FormatItemTime(tt.in)
			if got != tt.want {
				t.Fatalf("FormatItemTime(%v) = %q, want %q", tt.in, got, tt.want)
			}
			back, err := time.Parse(schema.ItemTimeLayout, got)
			if err != nil || !back.Equal(tt.in.Truncate(time.Millisecond)) {
				t.Fatalf("parse %q = %v, %v; want %v", got, back, err, tt.in.Truncate(time.Millisecond))
			}
		})
	}
}
