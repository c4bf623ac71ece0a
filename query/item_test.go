package query

import "encoding/json"

// str reads a string attribute of a plain item ("" when absent).
func str(item map[string]any, name string) string {
	s, _ := item[name].(string)
	return s
}

// num reads a number attribute of a plain item (0, false when absent).
func num(item map[string]any, name string) (float64, bool) {
	n, ok := item[name].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
