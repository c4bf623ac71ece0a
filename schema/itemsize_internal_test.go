package schema

import (
	"strconv"
	"strings"
	"testing"
)

func TestIntegerSizeLikeDecimalSize(t *testing.T) {
	for _, s := range []string{"0", "-0", "00", "1", "-1", "10", "100", "1000", "120", "0012", "-0012300", "7", "12", "123", "1234", "12345", "99999999999999999999", "-9223372036854775808", "1000000000000000000000000000000000000001"} {
		got, ok := integerSize(s)
		if !ok {
			t.Fatalf("integerSize(%q): not an integer", s)
		}
		if want := decimalSize(s); got != want {
			t.Errorf("integerSize(%q) = %d, decimalSize %d", s, got, want)
		}
	}
	for _, s := range []string{"", "-", "+1", "1.5", "1e3", "1E3", " 1", "1-", "--1", "0x1"} {
		if _, ok := integerSize(s); ok {
			t.Errorf("integerSize(%q): ok for a text that is not a plain integer", s)
		}
	}
}

func FuzzIntegerSize(f *testing.F) {
	f.Add(int64(0), uint8(0))
	f.Add(int64(-120), uint8(2))
	f.Fuzz(func(t *testing.T, v int64, zeros uint8) {
		s := strconv.FormatInt(v, 10) + strings.Repeat("0", int(zeros%40))
		got, ok := integerSize(s)
		if !ok || got != decimalSize(s) {
			t.Fatalf("integerSize(%q) = %d, %v; decimalSize %d", s, got, ok, decimalSize(s))
		}
	})
}
