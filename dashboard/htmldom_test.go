package dashboard_test

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// node is an element of a parsed HTML document: enough of a DOM to find
// elements by attribute and read their text. The standard library has no
// HTML parser; encoding/xml in non-strict mode, with HTML's void elements
// and entities, reads Chromium's --dump-dom serialization.
type node struct {
	tag      string
	attrs    map[string]string
	children []*node
	text     string // for text nodes (tag == "")
	parent   *node
}

// parseHTML parses a document as Chromium serializes it.
func parseHTML(t *testing.T, doc string) *node {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	root := &node{tag: "#document", attrs: map[string]string{}}
	cur := root
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse the dumped DOM: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			n := &node{tag: strings.ToLower(v.Name.Local), attrs: map[string]string{}, parent: cur}
			for _, a := range v.Attr {
				name := a.Name.Local
				if a.Name.Space != "" && a.Name.Space != "xmlns" {
					name = a.Name.Space + ":" + name
				}
				n.attrs[strings.ToLower(name)] = a.Value
			}
			cur.children = append(cur.children, n)
			cur = n
		case xml.EndElement:
			// Close up to the matching element (tolerates unclosed ones).
			for n := cur; n != nil && n != root; n = n.parent {
				if n.tag == strings.ToLower(v.Name.Local) {
					cur = n.parent
					break
				}
			}
		case xml.CharData:
			cur.children = append(cur.children, &node{text: string(v), parent: cur})
		}
	}
	return root
}

// walk calls fn for n and every element below it, in document order.
func (n *node) walk(fn func(*node)) {
	if n.tag != "" {
		fn(n)
	}
	for _, c := range n.children {
		c.walk(fn)
	}
}

// all returns the elements below n (n included) for which match is true.
func (n *node) all(match func(*node) bool) []*node {
	var out []*node
	n.walk(func(e *node) {
		if match(e) {
			out = append(out, e)
		}
	})
	return out
}

// byTestID returns the elements with data-testid id.
func (n *node) byTestID(id string) []*node {
	return n.all(func(e *node) bool { return e.attrs["data-testid"] == id })
}

// one returns the only element with data-testid id, failing the test when
// there is none or more than one.
func (n *node) one(t *testing.T, id string) *node {
	t.Helper()
	l := n.byTestID(id)
	if len(l) != 1 {
		t.Fatalf("data-testid=%q: %d elements, want 1", id, len(l))
	}
	return l[0]
}

// byID returns the element with id, or nil.
func (n *node) byID(id string) *node {
	l := n.all(func(e *node) bool { return e.attrs["id"] == id })
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

// textContent is the concatenated text below n, with white space collapsed.
func (n *node) textContent() string {
	var b strings.Builder
	var rec func(*node)
	rec = func(e *node) {
		if e.tag == "" {
			b.WriteString(e.text)
		}
		for _, c := range e.children {
			rec(c)
		}
	}
	rec(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// has reports whether n has attribute a (e.g. hidden).
func (n *node) has(a string) bool {
	_, ok := n.attrs[a]
	return ok
}

func TestParseHTML(t *testing.T) {
	doc := `<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="x" href="y"></head>` +
		`<body><p data-testid="a" hidden="">1 &amp; 2<br>three</p><input name="x" value="v">` +
		`<svg><rect data-testid="r" data-value="4.5"></rect></svg><span data-testid="a">x</span></body></html>`
	root := parseHTML(t, doc)
	if got := root.byTestID("a"); len(got) != 2 || got[0].textContent() != "1 & 2three" || !got[0].has("hidden") {
		t.Fatalf("byTestID(a) = %d elements, first text %q", len(got), got[0].textContent())
	}
	if r := root.one(t, "r"); r.tag != "rect" || r.attrs["data-value"] != "4.5" {
		t.Fatalf("rect = %+v", r)
	}
	if root.one(t, "r").parent.tag != "svg" {
		t.Fatal("rect is not inside svg")
	}
}
