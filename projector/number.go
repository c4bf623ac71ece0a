package projector

import "strings"

// NormalizeNumber renders a decimal the way DynamoDB returns numbers: no
// trailing fractional zeros, no trailing point, "-0" as "0".
func NormalizeNumber(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}
