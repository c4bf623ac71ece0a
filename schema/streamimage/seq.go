package streamimage

import "strings"

// SeqWidth is the width PadSeq pads sequence numbers to: DynamoDB stream
// sequence numbers are decimal strings of up to 40 digits.
const SeqWidth = 40

// CompareSeq compares two stream sequence numbers as the non-negative
// decimal integers they are: "9" < "10". It returns -1, 0 or +1. Leading
// zeros are ignored; strings that are not all digits still get a total
// order.
func CompareSeq(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return strings.Compare(a, b)
}

// PadSeq zero-pads a sequence number to SeqWidth digits, so that padded
// sequence numbers sort as text in stream order (object keys, dead-letter
// positions).
func PadSeq(seq string) string {
	if len(seq) >= SeqWidth {
		return seq
	}
	return strings.Repeat("0", SeqWidth-len(seq)) + seq
}
