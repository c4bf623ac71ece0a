package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/streamfold/streamfold/schema"
)

// Media types of the CloudEvents JSON event format and JSON batch format
// (CloudEvents 1.0, formats/json-format.md), as the HTTP protocol binding
// uses them in Content-Type.
const (
	MediaTypeCloudEvent      = "application/cloudevents+json"
	MediaTypeCloudEventBatch = "application/cloudevents-batch+json"
)

// ErrNotCloudEvent is wrapped by DecodeCloudEvents's error for a request
// that is in none of the CloudEvents HTTP content modes: its Content-Type is
// not a CloudEvents media type and it has no ce-specversion header.
var ErrNotCloudEvent = errors.New("ingest: not a CloudEvents request")

// ErrUnsupportedEventFormat is wrapped by DecodeCloudEvents's error for a
// structured or batched request in an event format other than JSON (such as
// application/cloudevents+avro), or with a charset other than UTF-8.
var ErrUnsupportedEventFormat = errors.New("ingest: unsupported CloudEvents event format")

// ErrMalformedCloudEvents is wrapped by DecodeCloudEvents's error for a
// structured or batched body that is not JSON, or a batch that is not a
// JSON array: no event can be told apart in it.
var ErrMalformedCloudEvents = errors.New("ingest: malformed CloudEvents body")

// CloudEventsMode is the content mode of a CloudEvents HTTP request
// (http-protocol-binding.md §3).
type CloudEventsMode int

// The three content modes.
const (
	// ModeStructured: one event in the JSON event format, Content-Type
	// application/cloudevents+json.
	ModeStructured CloudEventsMode = iota + 1
	// ModeBinary: attributes in ce-* headers, the body is the data and
	// Content-Type is datacontenttype.
	ModeBinary
	// ModeBatch: a JSON array of events in the JSON event format,
	// Content-Type application/cloudevents-batch+json.
	ModeBatch
)

func (m CloudEventsMode) String() string {
	switch m {
	case ModeStructured:
		return "structured"
	case ModeBinary:
		return "binary"
	case ModeBatch:
		return "batch"
	}
	return "unknown"
}

// CloudEvent is one event read from a CloudEvents request.
type CloudEvent struct {
	// Event is the envelope the attributes map to, validated and
	// normalised as Append would (Prepare: id derived when absent, subject
	// derived from data). When Err is set it holds the attributes that did
	// decode, for reporting (such as the id a rejected event was sent with).
	Event schema.Event
	// Ignored lists, sorted, the attributes that were read but are not
	// stored: extension attributes, dataschema, recordedat. The event
	// table keeps the attributes of the event contract only.
	Ignored []string
	// Err is why the event cannot be appended: a *schema.ValidationError
	// naming every attribute at fault (decoding errors first; the
	// contract's validation runs once the attributes decode).
	Err error
}

// The CloudEvents attributes that map to schema.Event, plus the two that
// are read and checked but not stored (datacontenttype: data is always
// JSON; dataschema: the type names the schema).
const (
	attrSpecVersion     = "specversion"
	attrID              = "id"
	attrSource          = "source"
	attrType            = "type"
	attrSubject         = "subject"
	attrTime            = "time"
	attrDataContentType = "datacontenttype"
	attrDataSchema      = "dataschema"
	memberData          = "data"
	memberDataBase64    = "data_base64"
)

// DecodeCloudEvents reads the CloudEvents of one HTTP request in any of the
// three content modes of the CloudEvents 1.0 HTTP protocol binding, with
// the JSON event format:
//
//   - Content-Type application/cloudevents+json: structured, one event;
//   - Content-Type application/cloudevents-batch+json: batched, a JSON
//     array of events (it may be empty);
//   - otherwise, with a ce-specversion header: binary, one event whose
//     attributes are the ce-* headers (double-quoted strings unquoted,
//     then percent-decoded; the result must be UTF-8) and whose data is the
//     body, with Content-Type as datacontenttype.
//
// Attributes map to schema.Event by name: specversion (required, "1.0"),
// id (when absent, derived as Append derives it), source, type, subject,
// time (RFC 3339) and data. datacontenttype, when present, must be a JSON
// media type (*/json or */*+json, charset UTF-8 if given); absent, data is
// JSON (as the JSON format specifies; in binary mode too). In the JSON
// format, data_base64 carries the data base64-encoded, and it must decode
// to JSON. A null attribute is unset. Extension attributes are read and
// not stored (CloudEvent.Ignored); a member or header name that is not a
// valid attribute name (lower-case letters and digits) is an error.
//
// The error is non-nil, and no event is returned, only when the request as
// a whole cannot be read: it wraps ErrNotCloudEvent,
// ErrUnsupportedEventFormat or ErrMalformedCloudEvents. Otherwise each event
// has its own Err, so one bad event of a batch does not hide the others.
func DecodeCloudEvents(h http.Header, body []byte) (CloudEventsMode, []CloudEvent, error) {
	ct := h.Get("Content-Type")
	mt, params, ctErr := mime.ParseMediaType(ct)
	if ctErr == nil {
		switch {
		case mt == MediaTypeCloudEvent || mt == MediaTypeCloudEventBatch:
			if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
				return 0, nil, fmt.Errorf("%w: Content-Type %s: charset must be utf-8, got %q", ErrUnsupportedEventFormat, mt, cs)
			}
			if mt == MediaTypeCloudEvent {
				ev, err := decodeStructured(body)
				if err != nil {
					return 0, nil, err
				}
				return ModeStructured, []CloudEvent{ev}, nil
			}
			evs, err := decodeBatch(body)
			if err != nil {
				return 0, nil, err
			}
			return ModeBatch, evs, nil
		case strings.HasPrefix(mt, "application/cloudevents"):
			return 0, nil, fmt.Errorf("%w: Content-Type %s: only the JSON event format is accepted (%s, %s)", ErrUnsupportedEventFormat, mt, MediaTypeCloudEvent, MediaTypeCloudEventBatch)
		}
	}
	for k := range h {
		if strings.EqualFold(k, "ce-specversion") {
			return ModeBinary, []CloudEvent{decodeBinary(h, body)}, nil
		}
	}
	return 0, nil, fmt.Errorf("%w: send Content-Type %s (structured), Content-Type %s (batched), or the event's attributes as ce-* headers with ce-specversion (binary)", ErrNotCloudEvent, MediaTypeCloudEvent, MediaTypeCloudEventBatch)
}

// decodeStructured reads one event in the JSON event format.
func decodeStructured(body []byte) (CloudEvent, error) {
	b := bytes.TrimSpace(body)
	if !json.Valid(b) {
		return CloudEvent{}, fmt.Errorf("%w: body: not JSON: %s", ErrMalformedCloudEvents, invalidJSON(b))
	}
	return decodeJSONEvent(b), nil
}

// decodeBatch reads a JSON array of events in the JSON event format.
func decodeBatch(body []byte) ([]CloudEvent, error) {
	b := bytes.TrimSpace(body)
	if !json.Valid(b) {
		return nil, fmt.Errorf("%w: body: not JSON: %s", ErrMalformedCloudEvents, invalidJSON(b))
	}
	if len(b) == 0 || b[0] != '[' {
		return nil, fmt.Errorf("%w: body: a batch must be a JSON array of CloudEvents, got %s", ErrMalformedCloudEvents, jsonKindOf(b))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, fmt.Errorf("%w: body: %s", ErrMalformedCloudEvents, jsonText(err))
	}
	out := make([]CloudEvent, len(raws))
	for i, raw := range raws {
		out[i] = decodeJSONEvent(raw)
	}
	return out, nil
}

// invalidJSON says why b is not JSON.
func invalidJSON(b []byte) string {
	if len(b) == 0 {
		return "empty body"
	}
	var v any
	err := json.Unmarshal(b, &v)
	if err == nil {
		return "invalid JSON"
	}
	return jsonText(err)
}

// jsonKindOf names the kind of the valid JSON value b.
func jsonKindOf(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "an object"
	case b[0] == '[':
		return "an array"
	case b[0] == '"':
		return "a string"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	case b[0] == 'n':
		return "null"
	}
	return "a number"
}

// attrs collects the attributes of one event while it is decoded.
type attrs struct {
	e        schema.Event
	specSeen bool
	ctype    string // datacontenttype, "" when absent
	data     []byte // data or data_base64 decoded; nil when absent
	ignored  []string
	errs     []*schema.FieldError
}

func (a *attrs) fail(field, rule string) {
	a.errs = append(a.errs, &schema.FieldError{Field: field, Rule: rule})
}

// failed reports whether field has an error already.
func (a *attrs) failed(field string) bool {
	for _, fe := range a.errs {
		if fe.Field == field {
			return true
		}
	}
	return false
}

// set records a context attribute's string value.
func (a *attrs) set(name, v string) {
	switch name {
	case attrSpecVersion:
		a.specSeen = true
		a.e.SpecVersion = v
	case attrID:
		a.e.ID = v
	case attrSource:
		a.e.Source = v
	case attrType:
		a.e.Type = v
	case attrSubject:
		a.e.Subject = v
	case attrTime:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			a.fail(attrTime, fmt.Sprintf("must be an RFC 3339 timestamp, got %q", v))
			return
		}
		a.e.Time = t
	case attrDataContentType:
		a.ctype = v
	default:
		a.ignored = append(a.ignored, name)
	}
}

// finish checks what the attributes say together and turns them into a
// validated event.
func (a *attrs) finish(binary bool) CloudEvent {
	switch {
	case a.failed(attrSpecVersion):
	case !a.specSeen:
		a.fail(attrSpecVersion, `is required ("1.0")`)
	case a.e.SpecVersion != schema.SpecVersion:
		a.fail(attrSpecVersion, fmt.Sprintf("must be %q, got %q", schema.SpecVersion, a.e.SpecVersion))
	}
	if a.ctype != "" {
		if rule := jsonMediaType(a.ctype); rule != "" {
			if binary {
				rule = "(the Content-Type header) " + rule
			}
			a.fail(attrDataContentType, rule)
		}
	}
	sort.Strings(a.ignored)
	a.e.Data = a.data
	ev := CloudEvent{Ignored: a.ignored}
	if len(a.errs) > 0 {
		ev.Err = &schema.ValidationError{Errors: a.errs}
	} else {
		ev.Err = Prepare(&a.e)
	}
	ev.Event = a.e
	return ev
}

// jsonMediaType returns "" when ct declares JSON data (a media type */json
// or */*+json, charset UTF-8 when given) and the broken rule otherwise.
func jsonMediaType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Sprintf("must be a media type, got %q", ct)
	}
	_, sub, _ := strings.Cut(mt, "/")
	if sub != "json" && !strings.HasSuffix(sub, "+json") {
		return fmt.Sprintf("must be a JSON media type (application/json or */*+json): streamfold stores JSON data only, got %q", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Sprintf("charset must be utf-8, got %q", cs)
	}
	return ""
}

// validAttrName reports whether name is a CloudEvents attribute name:
// lower-case ASCII letters and digits (spec.md, "Attribute Naming
// Convention").
func validAttrName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// decodeJSONEvent maps one event in the JSON event format.
func decodeJSONEvent(raw []byte) CloudEvent {
	a := &attrs{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		a.fail("event", "must be a JSON object (a CloudEvent in the JSON event format), got "+jsonKindOf(bytes.TrimSpace(raw)))
		return CloudEvent{Err: &schema.ValidationError{Errors: a.errs}}
	}
	seen := map[string]bool{}
	var data, data64 json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			a.fail("event", "is not valid JSON: "+jsonText(err))
			break
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			a.fail("event", "is not valid JSON: "+jsonText(err))
			break
		}
		field := name
		if field == "" {
			field = `""` // the empty member name
		}
		if seen[name] {
			a.fail(field, "is given twice")
			continue
		}
		seen[name] = true
		switch {
		case name == memberData:
			data = v
			continue
		case name == memberDataBase64:
			data64 = v
			continue
		case !validAttrName(name):
			a.fail(field, "is not a CloudEvents attribute name (lower-case letters a-z and digits only)")
			continue
		}
		if bytes.Equal(v, []byte("null")) {
			continue // a null attribute is unset (json-format.md §2.2)
		}
		switch name {
		case attrSpecVersion, attrID, attrSource, attrType, attrSubject, attrTime, attrDataContentType, attrDataSchema:
			var s string
			if v[0] != '"' || json.Unmarshal(v, &s) != nil {
				a.fail(name, "must be a JSON string, got "+jsonKindOf(v))
				continue
			}
			a.set(name, s)
		default:
			a.ignored = append(a.ignored, name) // an extension attribute
		}
	}
	switch {
	case data != nil && data64 != nil:
		a.fail(memberDataBase64, "must not be given together with data")
	case data64 != nil && !bytes.Equal(data64, []byte("null")):
		var s string
		if data64[0] != '"' || json.Unmarshal(data64, &s) != nil {
			a.fail(memberDataBase64, "must be a JSON string (base64), got "+jsonKindOf(data64))
			break
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			a.fail(memberDataBase64, "must be base64 (RFC 4648): "+err.Error())
			break
		}
		if !json.Valid(b) {
			a.fail(memberDataBase64, "must decode to JSON data: "+invalidJSON(bytes.TrimSpace(b)))
			break
		}
		a.data = b
	case data != nil:
		a.data = data
	}
	return a.finish(false)
}

// decodeBinary maps one event in binary mode: ce-* headers and the body.
func decodeBinary(h http.Header, body []byte) CloudEvent {
	a := &attrs{}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if len(k) < 3 || !strings.EqualFold(k[:3], "ce-") {
			continue
		}
		name := strings.ToLower(k[3:])
		header := "ce-" + name
		vs := h[k]
		switch {
		case name == attrDataContentType:
			a.fail(name, "must be the Content-Type header in binary mode, not "+header)
			continue
		case name == memberData:
			a.fail(name, "is the request body in binary mode, not a "+header+" header")
			continue
		case !validAttrName(name):
			a.fail(header, "is not a CloudEvents attribute header (ce- and lower-case letters a-z and digits only)")
			continue
		case len(vs) != 1:
			a.fail(name, fmt.Sprintf("header %s is given %d times", header, len(vs)))
			continue
		}
		v, err := headerValue(vs[0])
		if err != nil {
			a.fail(name, "header "+header+": "+err.Error())
			continue
		}
		a.set(name, v)
	}
	if ct := h.Get("Content-Type"); ct != "" {
		a.ctype = ct
	}
	if len(body) > 0 {
		a.data = body
	}
	return a.finish(true)
}

// headerValue decodes a binary-mode header value: a double-quoted string is
// unquoted (RFC 7230 §3.2.6), then one round of percent-decoding is done,
// and the result must be UTF-8 (http-protocol-binding.md §3.1.3.2).
func headerValue(v string) (string, error) {
	if strings.HasPrefix(v, `"`) {
		u, err := unquote(v)
		if err != nil {
			return "", err
		}
		v = u
	}
	d, err := url.PathUnescape(v)
	if err != nil {
		var esc url.EscapeError
		if errors.As(err, &esc) {
			return "", fmt.Errorf("invalid percent-encoding %q", string(esc))
		}
		return "", err
	}
	if !utf8.ValidString(d) {
		return "", errors.New("percent-decoded value is not UTF-8")
	}
	return d, nil
}

// unquote decodes an RFC 7230 quoted-string: "..." with backslash escapes.
func unquote(v string) (string, error) {
	if len(v) < 2 || v[len(v)-1] != '"' {
		return "", errors.New("unterminated quoted string")
	}
	var b strings.Builder
	in := v[1 : len(v)-1]
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch c {
		case '\\':
			if i+1 == len(in) {
				return "", errors.New("quoted string ends in a backslash")
			}
			i++
			b.WriteByte(in[i])
		case '"':
			return "", errors.New("quoted string has an unescaped quote inside")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
