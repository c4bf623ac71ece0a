// Package ghurls elides from a GitHub webhook the URLs that GitHub derives
// from the payload's own ids and names, and restores them byte for byte
// (format "ghurls1"). Package schema applies it to an event's data before
// compressing it (encoding "ghurls1+zstd+dict:<id>"); zdictgen trains the
// dictionary on elided samples.
//
// A GitHub webhook carries about a hundred such URLs: repository.url is the
// API base, "/repos/" and repository.full_name; the repository's forks_url
// is that plus "/forks"; a user's followers_url is the API base, "/users/",
// its login and "/followers"; and so on. Elide replaces every string value
// that equals its derivation by a marker, and Restore computes it back.
//
// The elided form is
//
//	A 0x01 W 0x01 body
//
// where A is the API base (repository.url without "/repos/" and full_name:
// "https://api.github.com", or "https://ghe.example.com/api/v3" on GitHub
// Enterprise Server) and W the web base (repository.html_url without "/" and
// full_name), both taken from the payload itself, either of them empty when
// the payload does not yield it; and body is the JSON text with the content
// of each elided string replaced by 0x01 (the first derivation of its field)
// or 0x01 and a digit k (its k-th alternative). A raw 0x01 byte never occurs
// in JSON text (outside strings only whitespace is allowed, inside them
// control characters must be escaped), so a marker cannot be confused with
// data; a payload that holds one anyway (not JSON) is not elided.
//
// Everything works on the raw text of the JSON tokens: a derivation
// concatenates the raw content of strings (escapes and all) and the literal
// text of numbers, and an elided string is one whose raw content equals that
// concatenation exactly. So nothing is unescaped, reformatted or reordered,
// and a value that differs from its derivation in any byte is kept as it is.
// A derivation's inputs:
//
//   - $A, $W from the header; $H is W's host (W without "https://" or
//     "http://", when no path follows);
//   - $F: the first "full_name" member of the first top-level "repository"
//     object (a string);
//   - $L, $I, $R, $S: the first "login", "id", "run_id" and "slug" member of
//     the object holding the field (login and slug strings, id and run_id
//     numbers of digits only).
//
// An input that is missing, or not of its type, leaves the fields that need
// it as they are. Which objects and fields have derivations, and which, is
// rulesV1: FROZEN, because items exist for as long as the event table keeps
// them and their dead letters for ever. A change is a new version with its
// own encoding name.
//
// Elide and Restore are pure functions, safe for concurrent use.
package ghurls

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Version names the format; package schema's encoding name includes it.
const Version = "ghurls1"

// urlMarker starts an elided string's content.
const urlMarker = 0x01

// objKind is what a JSON object of a webhook is, by its path.
type objKind uint8

const (
	kindNone objKind = iota
	kindRoot
	kindRepo       // repository
	kindUser       // repository.owner, sender, deployment.creator
	kindOrg        // organization
	kindJob        // workflow_job
	kindDeployment // deployment
	kindEnterprise // enterprise
	nKinds
)

// childKind is the kind of the object that is member key of an object of
// kind parent.
func childKind(parent objKind, key []byte) objKind {
	switch parent {
	case kindRoot:
		switch string(key) {
		case "repository":
			return kindRepo
		case "sender":
			return kindUser
		case "organization":
			return kindOrg
		case "workflow_job":
			return kindJob
		case "deployment":
			return kindDeployment
		case "enterprise":
			return kindEnterprise
		}
	case kindRepo:
		if string(key) == "owner" {
			return kindUser
		}
	case kindDeployment:
		if string(key) == "creator" {
			return kindUser
		}
	}
	return kindNone
}

// The inputs of an object, read from its own members.
const (
	varLogin = iota
	varID
	varRunID
	varSlug
	varFullName
	nVars
)

// localVars are the members an object's derivations read, and whether each
// must be a string (true) or a number of digits.
var localVars = [nVars]struct {
	key    string
	isText bool
}{
	varLogin:    {"login", true},
	varID:       {"id", false},
	varRunID:    {"run_id", false},
	varSlug:     {"slug", true},
	varFullName: {"full_name", true},
}

// rulesV1 holds, per object kind and field, the derivations of encoding
// ghurls1, in order of preference ($A, $W, $H, $F, $L, $I, $R, $S as
// described above). FROZEN: changing an entry changes how stored items
// decode; add a version instead.
var rulesV1 = map[objKind]map[string][]string{
	kindRepo: {
		"url":               {"$A/repos/$F"},
		"html_url":          {"$W/$F"},
		"forks_url":         {"$A/repos/$F/forks"},
		"keys_url":          {"$A/repos/$F/keys{/key_id}"},
		"collaborators_url": {"$A/repos/$F/collaborators{/collaborator}"},
		"teams_url":         {"$A/repos/$F/teams"},
		"hooks_url":         {"$A/repos/$F/hooks"},
		"issue_events_url":  {"$A/repos/$F/issues/events{/number}"},
		"events_url":        {"$A/repos/$F/events"},
		"assignees_url":     {"$A/repos/$F/assignees{/user}"},
		"branches_url":      {"$A/repos/$F/branches{/branch}"},
		"tags_url":          {"$A/repos/$F/tags"},
		"blobs_url":         {"$A/repos/$F/git/blobs{/sha}"},
		"git_tags_url":      {"$A/repos/$F/git/tags{/sha}"},
		"git_refs_url":      {"$A/repos/$F/git/refs{/sha}"},
		"trees_url":         {"$A/repos/$F/git/trees{/sha}"},
		"statuses_url":      {"$A/repos/$F/statuses/{sha}"},
		"languages_url":     {"$A/repos/$F/languages"},
		"stargazers_url":    {"$A/repos/$F/stargazers"},
		"contributors_url":  {"$A/repos/$F/contributors"},
		"subscribers_url":   {"$A/repos/$F/subscribers"},
		"subscription_url":  {"$A/repos/$F/subscription"},
		"commits_url":       {"$A/repos/$F/commits{/sha}"},
		"git_commits_url":   {"$A/repos/$F/git/commits{/sha}"},
		"comments_url":      {"$A/repos/$F/comments{/number}"},
		"issue_comment_url": {"$A/repos/$F/issues/comments{/number}"},
		"contents_url":      {"$A/repos/$F/contents/{+path}"},
		"compare_url":       {"$A/repos/$F/compare/{base}...{head}"},
		"merges_url":        {"$A/repos/$F/merges"},
		"archive_url":       {"$A/repos/$F/{archive_format}{/ref}"},
		"downloads_url":     {"$A/repos/$F/downloads"},
		"issues_url":        {"$A/repos/$F/issues{/number}"},
		"pulls_url":         {"$A/repos/$F/pulls{/number}"},
		"milestones_url":    {"$A/repos/$F/milestones{/number}"},
		"notifications_url": {"$A/repos/$F/notifications{?since,all,participating}"},
		"labels_url":        {"$A/repos/$F/labels{/name}"},
		"releases_url":      {"$A/repos/$F/releases{/id}"},
		"deployments_url":   {"$A/repos/$F/deployments"},
		"git_url":           {"git://$H/$F.git"},
		"ssh_url":           {"git@$H:$F.git"},
		"clone_url":         {"$W/$F.git"},
		"svn_url":           {"$W/$F"},
	},
	kindUser: {
		"avatar_url":          {"https://avatars.githubusercontent.com/u/$I?v=4", "$W/avatars/u/$I?"},
		"url":                 {"$A/users/$L"},
		"html_url":            {"$W/$L"},
		"followers_url":       {"$A/users/$L/followers"},
		"following_url":       {"$A/users/$L/following{/other_user}"},
		"gists_url":           {"$A/users/$L/gists{/gist_id}"},
		"starred_url":         {"$A/users/$L/starred{/owner}{/repo}"},
		"subscriptions_url":   {"$A/users/$L/subscriptions"},
		"organizations_url":   {"$A/users/$L/orgs"},
		"repos_url":           {"$A/users/$L/repos"},
		"events_url":          {"$A/users/$L/events{/privacy}"},
		"received_events_url": {"$A/users/$L/received_events"},
	},
	kindOrg: {
		"url":                {"$A/orgs/$L"},
		"repos_url":          {"$A/orgs/$L/repos"},
		"events_url":         {"$A/orgs/$L/events"},
		"hooks_url":          {"$A/orgs/$L/hooks"},
		"issues_url":         {"$A/orgs/$L/issues"},
		"members_url":        {"$A/orgs/$L/members{/member}"},
		"public_members_url": {"$A/orgs/$L/public_members{/member}"},
		"avatar_url":         {"https://avatars.githubusercontent.com/u/$I?v=4", "$W/avatars/u/$I?"},
	},
	kindJob: {
		"url":           {"$A/repos/$F/actions/jobs/$I"},
		"run_url":       {"$A/repos/$F/actions/runs/$R"},
		"html_url":      {"$W/$F/actions/runs/$R/job/$I", "$W/$F/runs/$I"},
		"check_run_url": {"$A/repos/$F/check-runs/$I"},
	},
	kindDeployment: {
		"url":            {"$A/repos/$F/deployments/$I"},
		"statuses_url":   {"$A/repos/$F/deployments/$I/statuses"},
		"repository_url": {"$A/repos/$F"},
	},
	kindEnterprise: {
		"html_url":   {"$W/enterprises/$S"},
		"avatar_url": {"https://avatars.githubusercontent.com/b/$I?v=4"},
	},
}

// tmplPart is a literal or, when v is set, one of the inputs.
type tmplPart struct {
	lit string
	v   byte // 'A', 'W', 'H', 'F', 'L', 'I', 'R', 'S' or 0
}

// urlRules is rulesV1 parsed: per kind, per field, the alternatives.
var rules = func() [nKinds]map[string][][]tmplPart {
	var out [nKinds]map[string][][]tmplPart
	for kind, fields := range rulesV1 {
		out[kind] = make(map[string][][]tmplPart, len(fields))
		for field, alts := range fields {
			if len(alts) > 9 {
				panic("schema: rulesV1: more than 9 alternatives for " + field)
			}
			for _, a := range alts {
				out[kind][field] = append(out[kind][field], parseTemplate(a))
			}
		}
	}
	return out
}()

func parseTemplate(s string) []tmplPart {
	var parts []tmplPart
	for s != "" {
		i := strings.IndexByte(s, '$')
		switch {
		case i < 0:
			parts, s = append(parts, tmplPart{lit: s}), ""
		case i > 0:
			parts, s = append(parts, tmplPart{lit: s[:i]}), s[i:]
		default:
			if len(s) < 2 || !strings.ContainsRune("AWHFLIRS", rune(s[1])) {
				panic("schema: rulesV1: bad template " + s)
			}
			parts, s = append(parts, tmplPart{v: s[1]}), s[2:]
		}
	}
	return parts
}

// urlDoc is what a scan of a payload (or of its elided form) found.
type urlDoc struct {
	text   []byte
	objs   []urlObj
	fields []urlField
	repo   int // index in objs of the first top-level repository, or -1
}

// urlObj is one object of a kind with derivations: its inputs, as spans
// of the scanned text (start < 0: absent or not of its type).
type urlObj struct {
	kind objKind
	seen uint8 // bit per var: the first member of that name was read
	vars [nVars][2]int
}

// urlField is a string member of an object that has derivations for it:
// the span of its raw content (between the quotes).
type urlField struct {
	obj        int
	key        []byte
	start, end int
}

// urlInputs resolves a template's inputs for one object.
type urlInputs struct {
	text    []byte
	a, w, h []byte // nil: unknown
	f       []byte
	obj     *urlObj
}

func (in *urlInputs) get(v byte) ([]byte, bool) {
	span := func(i int) ([]byte, bool) {
		s := in.obj.vars[i]
		if s[0] < 0 {
			return nil, false
		}
		return in.text[s[0]:s[1]], true
	}
	switch v {
	case 'A':
		return in.a, in.a != nil
	case 'W':
		return in.w, in.w != nil
	case 'H':
		return in.h, in.h != nil
	case 'F':
		return in.f, in.f != nil
	case 'L':
		return span(varLogin)
	case 'I':
		return span(varID)
	case 'R':
		return span(varRunID)
	case 'S':
		return span(varSlug)
	}
	return nil, false
}

// expand appends a template's value to dst; ok is false when an input is
// unknown.
func (in *urlInputs) expand(dst []byte, t []tmplPart) ([]byte, bool) {
	for _, p := range t {
		if p.v == 0 {
			dst = append(dst, p.lit...)
			continue
		}
		b, ok := in.get(p.v)
		if !ok {
			return dst, false
		}
		dst = append(dst, b...)
	}
	return dst, true
}

// hostOf is W's host, for git_url and ssh_url: nil unless W is
// "https://" or "http://" followed by a host without a path.
func hostOf(w []byte) []byte {
	for _, scheme := range []string{"https://", "http://"} {
		if h, ok := bytes.CutPrefix(w, []byte(scheme)); ok && len(h) > 0 && bytes.IndexByte(h, '/') < 0 {
			return h
		}
	}
	return nil
}

// errURLScan is a scan's only error: the text is not JSON (elided or not).
var errURLScan = errors.New("not JSON text")

// scanURLs walks JSON text (whose strings may hold raw control bytes, as an
// elided body's markers) and collects the objects with derivations, their
// inputs and their derivable fields. It keeps a stack, not recursion, so
// nesting depth costs no Go stack.
func scanURLs(b []byte) (*urlDoc, error) {
	type frame struct {
		obj  bool
		kind objKind
		idx  int    // index in doc.objs when kind > kindRoot
		key  []byte // the current member's key
	}
	doc := &urlDoc{text: b, repo: -1, objs: make([]urlObj, 0, 8), fields: make([]urlField, 0, 128)}
	var stack []frame
	i := 0
	ws := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	// str reads a string at b[i] == '"' and returns its raw content's span.
	str := func() (int, int, error) {
		start := i + 1
		for j := start; ; {
			k := bytes.IndexByte(b[j:], '"')
			if k < 0 {
				return 0, 0, errURLScan
			}
			end := j + k
			// The quote ends the string unless an odd number of
			// backslashes precedes it.
			bs := 0
			for p := end - 1; p >= start && b[p] == '\\'; p-- {
				bs++
			}
			if bs%2 == 0 {
				i = end + 1
				return start, end, nil
			}
			j = end + 1
		}
	}
	// key reads an object member's name and its colon into f.key.
	key := func(f *frame) error {
		if i >= len(b) || b[i] != '"' {
			return errURLScan
		}
		s, e, err := str()
		if err != nil {
			return err
		}
		f.key = b[s:e]
		ws()
		if i >= len(b) || b[i] != ':' {
			return errURLScan
		}
		i++
		return nil
	}
	for {
		// A value.
		ws()
		if i >= len(b) {
			return nil, errURLScan
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			i++
			f := frame{obj: c == '{'}
			if f.obj {
				switch {
				case top == nil:
					f.kind = kindRoot
				case top.obj:
					f.kind = childKind(top.kind, top.key)
				}
				if f.kind > kindRoot {
					f.idx = len(doc.objs)
					o := urlObj{kind: f.kind}
					for v := range o.vars {
						o.vars[v] = [2]int{-1, -1}
					}
					doc.objs = append(doc.objs, o)
					if f.kind == kindRepo && doc.repo < 0 {
						doc.repo = f.idx
					}
				}
			}
			stack = append(stack, f)
			top = &stack[len(stack)-1]
			ws()
			if i < len(b) && (b[i] == '}' && f.obj || b[i] == ']' && !f.obj) {
				i++
				stack = stack[:len(stack)-1]
				goto next
			}
			if f.obj {
				if err := key(top); err != nil {
					return nil, err
				}
			}
			continue
		case c == '"':
			s, e, err := str()
			if err != nil {
				return nil, err
			}
			if top != nil && top.obj && top.kind > kindRoot {
				doc.member(top.idx, top.key, s, e, true)
				if _, ok := rules[top.kind][string(top.key)]; ok {
					doc.fields = append(doc.fields, urlField{obj: top.idx, key: top.key, start: s, end: e})
				}
			}
		default:
			// A number or a literal: the run of bytes up to a delimiter.
			s := i
			for i < len(b) && !isDelim(b[i]) {
				i++
			}
			if i == s {
				return nil, errURLScan
			}
			if top != nil && top.obj && top.kind > kindRoot {
				doc.member(top.idx, top.key, s, i, false)
			}
		}
	next:
		// After a value: the end, a separator or a container's end.
		for {
			ws()
			if len(stack) == 0 {
				if i != len(b) {
					return nil, errURLScan
				}
				return doc, nil
			}
			top = &stack[len(stack)-1]
			if i >= len(b) {
				return nil, errURLScan
			}
			switch {
			case b[i] == ',':
				i++
				if top.obj {
					ws()
					if err := key(top); err != nil {
						return nil, err
					}
				}
			case b[i] == '}' && top.obj, b[i] == ']' && !top.obj:
				i++
				stack = stack[:len(stack)-1]
				continue
			default:
				return nil, errURLScan
			}
			break
		}
	}
}

// member records a scalar member of object idx when it is the first of its
// name among the inputs.
func (d *urlDoc) member(idx int, key []byte, start, end int, isText bool) {
	o := &d.objs[idx]
	for v, lv := range localVars {
		if string(key) != lv.key || o.seen&(1<<v) != 0 {
			continue
		}
		o.seen |= 1 << v
		if lv.isText == isText && (isText || isDigits(d.text[start:end])) {
			o.vars[v] = [2]int{start, end}
		}
	}
}

// isDigits reports whether b is a non-empty run of ASCII digits.
func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// isDelim reports whether c ends a number or a literal.
func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
		return true
	}
	return false
}

// fullName is F: the first full_name of the first top-level repository.
func (d *urlDoc) fullName(text []byte) []byte {
	if d.repo < 0 {
		return nil
	}
	s := d.objs[d.repo].vars[varFullName]
	if s[0] < 0 {
		return nil
	}
	return text[s[0]:s[1]]
}

// Elide returns data's elided form; ok is false when nothing was elided
// (data is not JSON, has no top-level repository with a full_name, or no
// value equals its derivation), and the caller stores data as it is.
func Elide(data []byte) (out []byte, ok bool) {
	if bytes.IndexByte(data, urlMarker) >= 0 || !json.Valid(data) {
		return nil, false
	}
	doc, err := scanURLs(data)
	if err != nil || doc.repo < 0 {
		return nil, false
	}
	in := urlInputs{text: data, f: doc.fullName(data)}
	if in.f == nil {
		return nil, false
	}
	// A and W: repository.url and html_url without their full_name.
	for _, fl := range doc.fields {
		if fl.obj != doc.repo || in.a != nil && in.w != nil {
			continue
		}
		v := data[fl.start:fl.end]
		switch string(fl.key) {
		case "url":
			if p, ok := bytes.CutSuffix(v, append([]byte("/repos/"), in.f...)); ok && len(p) > 0 && in.a == nil {
				in.a = p
			}
		case "html_url":
			if p, ok := bytes.CutSuffix(v, append([]byte("/"), in.f...)); ok && len(p) > 0 && in.w == nil {
				in.w = p
			}
		}
	}
	in.h = hostOf(in.w)
	out = make([]byte, 0, len(data))
	out = append(out, in.a...)
	out = append(out, urlMarker)
	out = append(out, in.w...)
	out = append(out, urlMarker)
	var scratch []byte
	last, elided := 0, 0
	for _, fl := range doc.fields {
		in.obj = &doc.objs[fl.obj]
		v := data[fl.start:fl.end]
		for k, t := range rules[in.obj.kind][string(fl.key)] {
			var ok bool
			if scratch, ok = in.expand(scratch[:0], t); !ok || !bytes.Equal(scratch, v) {
				continue
			}
			out = append(out, data[last:fl.start]...)
			out = append(out, urlMarker)
			if k > 0 {
				out = append(out, '0'+byte(k))
			}
			last = fl.end
			elided++
			break
		}
	}
	if elided == 0 {
		return nil, false
	}
	out = append(out, data[last:]...)
	// The codec is exact by construction; checking costs a scan and keeps
	// a mistake from ever losing a byte.
	if back, err := Restore(out, len(data)); err != nil || !bytes.Equal(back, data) {
		return nil, false
	}
	return out, true
}

// Restore reverses Elide. Its errors (a missing header, text that is not
// JSON, a marker that is malformed, in a field without that derivation or
// whose inputs are missing, a result above limit bytes) mean enc is not
// Elide's output.
func Restore(enc []byte, limit int) ([]byte, error) {
	a, rest, ok1 := bytes.Cut(enc, []byte{urlMarker})
	w, body, ok2 := bytes.Cut(rest, []byte{urlMarker})
	if !ok1 || !ok2 {
		return nil, errors.New("ghurls: no header")
	}
	doc, err := scanURLs(body)
	if err != nil {
		return nil, fmt.Errorf("ghurls: %w", err)
	}
	hdr := len(enc) - len(body) // byte offsets in errors count from enc's start
	in := urlInputs{text: body, f: doc.fullName(body), h: hostOf(w)}
	if len(a) > 0 {
		in.a = a
	}
	if len(w) > 0 {
		in.w = w
	}
	out := make([]byte, 0, len(body)+64*len(doc.fields))
	last := 0
	for _, fl := range doc.fields {
		v := body[fl.start:fl.end]
		if len(v) == 0 || v[0] != urlMarker {
			continue
		}
		k := 0
		switch {
		case len(v) == 2 && v[1] >= '1' && v[1] <= '9':
			k = int(v[1] - '0')
		case len(v) != 1:
			return nil, fmt.Errorf("ghurls: byte %d: malformed marker", hdr+fl.start)
		}
		in.obj = &doc.objs[fl.obj]
		alts := rules[in.obj.kind][string(fl.key)]
		if k >= len(alts) {
			return nil, fmt.Errorf("ghurls: byte %d: field %q has no derivation %d", hdr+fl.start, fl.key, k)
		}
		out = append(out, body[last:fl.start]...)
		if out, ok1 = in.expand(out, alts[k]); !ok1 {
			return nil, fmt.Errorf("ghurls: byte %d: field %q: an input of its derivation is missing", hdr+fl.start, fl.key)
		}
		if len(out) > limit {
			return nil, fmt.Errorf("ghurls: restored data exceeds %d bytes", limit)
		}
		last = fl.end
	}
	out = append(out, body[last:]...)
	if len(out) > limit {
		return nil, fmt.Errorf("ghurls: restored data exceeds %d bytes", limit)
	}
	return out, nil
}
