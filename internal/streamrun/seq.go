package streamrun

import "strings"

// cmpSeq compares two stream sequence numbers as the non-negative decimal
// integers they are: "9" < "10". It returns -1, 0 or +1. Leading zeros are
// ignored; strings that are not all digits still get a total order.
func cmpSeq(a, b string) int {
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
