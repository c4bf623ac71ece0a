package schema

import (
	"regexp"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hex form.
func IsUUID(s string) bool { return uuidRE.MatchString(s) }
