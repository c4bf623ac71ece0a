package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// SpecVersion is the CloudEvents specification version of every envelope.
const SpecVersion = "1.0"

// MaxIDLength bounds an event id (it is the event table's sort key).
const MaxIDLength = 256

// Event is one raw, immutable event: a CloudEvents 1.0 envelope around a typed
// payload. Producers fill ID (or leave it for the writer to generate), Source,
// Type, Time and Data; Subject is derived from Data when empty; RecordedAt is
// set by the writer when the event is appended.
type Event struct {
	SpecVersion string          `json:"specversion,omitempty"`
	ID          string          `json:"id"`
	Source      string          `json:"source"`
	Type        string          `json:"type"`
	Subject     string          `json:"subject,omitempty"`
	Time        time.Time       `json:"time"`
	Data        json.RawMessage `json:"data"`
	RecordedAt  *time.Time      `json:"recordedat,omitempty"`
}

// Payload is the typed data of one event type.
type Payload interface {
	// Subject is the aggregate this payload belongs to, as written in the
	// envelope's subject attribute.
	Subject() string
	// validate records the payload's broken rules for the given event type.
	validate(c *checker, eventType string)
}

// Domain groups event types by the system that produces them.
type Domain string

// The four domains of the seeds.
const (
	DomainStates   Domain = "states"   // Step Functions agent executions (seeds 000, 002)
	DomainAlbums   Domain = "albums"   // sf/ldf album workflow (seed 001)
	DomainGitHub   Domain = "github"   // GitHub workflow jobs and RunsOn runners (seed 003)
	DomainMessages Domain = "messages" // rez_agent messages (seed 004)
)

// Kind describes one event type, as its domain registered it (see
// Descriptor).
type Kind struct {
	Type   string
	Domain Domain
	// Aggregate is the kind of subject the event folds into.
	Aggregate string
	// Status is the status the event moves its subject to ("" when the
	// payload decides).
	Status string
	new    func() Payload
}

var kinds = map[string]Kind{}

// Types lists every known event type, sorted.
func Types() []string {
	out := make([]string, 0, len(kinds))
	for t := range kinds {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// KindOf returns the kind of an event type and whether it is known.
func KindOf(eventType string) (Kind, bool) {
	k, ok := kinds[eventType]
	return k, ok
}

// Decode decodes the event's data into the typed payload for its type. It
// does not validate; use Validate for that.
func Decode(e Event) (Payload, error) {
	k, ok := kinds[e.Type]
	if !ok {
		return nil, &FieldError{Field: "type", Rule: fmt.Sprintf("unknown event type %q", e.Type), Err: ErrUnknownType}
	}
	p := k.new()
	if err := json.Unmarshal(e.Data, p); err != nil {
		return nil, &FieldError{Field: "data", Rule: "does not decode as " + e.Type + ": " + jsonErrText(err)}
	}
	return p, nil
}

// Validate checks the envelope and its payload and normalises the envelope in
// place: specversion is set, time is converted to UTC, and an empty subject is
// filled from the payload. It returns the decoded payload, or a
// *ValidationError naming every broken rule.
func Validate(e *Event) (Payload, error) {
	c := &checker{}
	if e.SpecVersion == "" {
		e.SpecVersion = SpecVersion
	} else if e.SpecVersion != SpecVersion {
		c.fail("specversion", `must be "1.0"`)
	}
	if c.required("id", e.ID) {
		c.maxLen("id", e.ID, MaxIDLength)
	}
	if c.required("source", e.Source) {
		c.maxLen("source", e.Source, 1024)
	}
	if e.Time.IsZero() {
		c.fail("time", "is required (RFC 3339)")
	} else {
		e.Time = e.Time.UTC()
	}
	var payload Payload
	switch k, known := kinds[e.Type]; {
	case e.Type == "":
		c.fail("type", "is required")
	case !known:
		c.errs = append(c.errs, &FieldError{Field: "type", Rule: fmt.Sprintf("unknown event type %q", e.Type), Err: ErrUnknownType})
	default:
		data := bytes.TrimSpace(e.Data)
		if len(data) == 0 || bytes.Equal(data, []byte("null")) {
			c.fail("data", "is required")
			break
		}
		if data[0] != '{' {
			c.fail("data", "must be a JSON object")
			break
		}
		if !utf8.Valid(data) {
			// JSON text is UTF-8 (RFC 8259); DynamoDB strings, the archive's
			// string column and the SDK's JSON encoding would all replace
			// the invalid bytes, so the event could never be kept exactly.
			c.fail("data", "must be UTF-8 (RFC 8259)")
			break
		}
		p := k.new()
		if err := decodePayload(data, p); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				kind := jsonKind(te.Type.Kind().String())
				want := "a JSON " + kind
				if kind == "number" && strings.HasPrefix(te.Value, "number") {
					want = "an integer" // a number that does not fit an integer field
				}
				c.fail("data."+te.Field, "must be "+want+", got "+te.Value)
			} else {
				c.fail("data", "does not decode as "+e.Type+": "+jsonErrText(err))
			}
			break
		}
		pc := &checker{prefix: "data"}
		p.validate(pc, e.Type)
		if len(pc.errs) == 0 {
			// What DynamoDB could never store (see limits.go).
			if le := CheckData("data", data); le != nil {
				pc.errs = append(pc.errs, le.fieldError())
			}
		}
		c.errs = append(c.errs, pc.errs...)
		if len(pc.errs) == 0 {
			payload = p
			want := p.Subject()
			if e.Subject == "" {
				e.Subject = want
			} else if e.Subject != want {
				c.fail("subject", fmt.Sprintf("must be %q (derived from data), got %q", want, e.Subject))
			}
		}
	}
	checkEnvelopeLimits(c, e)
	if err := c.err(); err != nil {
		return nil, err
	}
	return payload, nil
}

// decodePayload is json.Unmarshal(data, p) for data without surrounding
// space. A payload with its own UnmarshalJSON (which decodes with
// json.Unmarshal itself) is handed the data directly: json.Unmarshal would
// check the whole text once before calling it, and the method's own
// json.Unmarshal checks it again. The result and the errors are the same:
// json.Unmarshal hands a top-level Unmarshaler exactly these bytes and
// returns its error as is (TestDecodePayloadLikeUnmarshal).
func decodePayload(data []byte, p Payload) error {
	if u, ok := p.(json.Unmarshaler); ok {
		return u.UnmarshalJSON(data)
	}
	return json.Unmarshal(data, p)
}

// jsonErrText turns encoding/json errors into a short, field-naming sentence.
func jsonErrText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("field %s: cannot use JSON %s as %s", field, te.Value, te.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON kind that a Go kind decodes from.
func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	default:
		return goKind
	}
}
