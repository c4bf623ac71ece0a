package schema

import (
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's limit on the size of one item (400 KB), as
// ItemSize counts it. An event whose item would be larger can never be
// stored; ingest rejects it before writing.
const MaxItemBytes = 400 * 1024

// WriteUnitBytes is the size one write capacity unit covers: a write costs
// one unit per started 1 KB of the item (twice that inside a transaction).
const WriteUnitBytes = 1024

// ItemSize returns the size DynamoDB accounts for an item: the UTF-8 length
// of every attribute name plus the size of its value. Strings count their
// UTF-8 bytes and binaries their bytes; a number counts one byte per two
// significant digits plus one (plus one more when negative); BOOL and NULL
// count one byte; a map or list counts 3 bytes plus one per element plus its
// elements (and a map its keys). This follows DynamoDB's published rules;
// for the items streamfold writes (strings, binaries and one integer) it is
// exact, which a test checks against DynamoDB Local's limit and its consumed
// capacity. Nil and unknown values count zero.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

// WriteUnits returns the write capacity units a non-transactional write of
// an item of size bytes consumes: one per started WriteUnitBytes, at least
// one.
func WriteUnits(size int) int {
	return max(1, (size+WriteUnitBytes-1)/WriteUnitBytes)
}

func valueSize(v types.AttributeValue) int {
	switch m := v.(type) {
	case *types.AttributeValueMemberS:
		return len(m.Value)
	case *types.AttributeValueMemberB:
		return len(m.Value)
	case *types.AttributeValueMemberN:
		return numberSize(m.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		return sumSizes(m.Value, func(s string) int { return len(s) })
	case *types.AttributeValueMemberBS:
		return sumSizes(m.Value, func(b []byte) int { return len(b) })
	case *types.AttributeValueMemberNS:
		return sumSizes(m.Value, numberSize)
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range m.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range m.Value {
			n += 1 + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize is DynamoDB's size of a number: its significant digits are
// stored in base 100, aligned on the decimal point, one byte per pair, plus
// one byte (and one more when negative). Leading and trailing zeros are
// trimmed, so 1764000000 is 17|64 (3 bytes) and 176400000 is 1|76|40 (4).
func numberSize(s string) int {
	if n, ok := integerSize(s); ok {
		return n
	}
	return decimalSize(s)
}

// integerSize is numberSize of a plain integer (an optional '-' and
// digits, what the projector writes nearly always), without building
// strings; ok is false for any other text.
func integerSize(s string) (int, bool) {
	neg := len(s) > 0 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	point := len(digits)
	for digits != "" && digits[0] == '0' {
		digits, point = digits[1:], point-1
	}
	for digits != "" && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	n := 1
	if digits != "" {
		n += (point&1 + len(digits) + 1) / 2
	}
	if neg {
		n++
	}
	return n, true
}

// decimalSize is numberSize of any number text (a sign, a fraction, an
// exponent).
func decimalSize(s string) int {
	neg := strings.HasPrefix(s, "-")
	mant, exp, _ := strings.Cut(strings.ToLower(strings.TrimLeft(s, "+-")), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) // digits before the decimal point
	// Most numbers have no exponent, and Atoi("") would allocate its error.
	if exp != "" {
		if e, err := strconv.Atoi(exp); err == nil {
			point += e
		}
	}
	for digits != "" && digits[0] == '0' {
		digits, point = digits[1:], point-1
	}
	digits = strings.TrimRight(digits, "0")
	n := 1
	if digits != "" {
		lead := point & 1 // a pair starts at an even distance from the point
		n += (lead + len(digits) + 1) / 2
	}
	if neg {
		n++
	}
	return n
}

// sumSizes is the size of a set: the sum of its members' sizes.
func sumSizes[T any](set []T, size func(T) int) int {
	n := 0
	for _, v := range set {
		n += size(v)
	}
	return n
}
