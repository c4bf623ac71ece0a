package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/schema"
)

const failedData = `{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","error_message":"ntfy.sh returned 503"}`

func binaryHeader(kv ...string) http.Header {
	h := http.Header{}
	h.Set("Ce-Specversion", "1.0")
	h.Set("Ce-Type", "rez.message.failed")
	h.Set("Ce-Source", "rez_agent/dev")
	h.Set("Ce-Id", "b-1")
	h.Set("Ce-Time", "2025-10-21T14:30:15Z")
	h.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
			continue
		}
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func structuredHeader(ct string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", ct)
	return h
}

// TestDecodeCloudEvents covers what the HTTP fixtures do not: header value
// decoding, null and repeated attributes, the media type rules, and the
// mapping of each attribute. want is the event's error, or "" for a valid
// event whose id, subject, time and ignored attributes are checked.
func TestDecodeCloudEvents(t *testing.T) {
	structuredEvent := func(members string) []byte {
		return []byte(`{"specversion":"1.0","type":"rez.message.failed","source":"rez_agent/dev","time":"2025-10-21T14:30:15Z"` + members + `}`)
	}
	tests := []struct {
		name        string
		header      http.Header
		body        string
		wantMode    CloudEventsMode
		wantErr     error // the request's
		want        string
		wantID      string
		wantTime    string
		wantIgnored string
	}{
		{name: "binary", header: binaryHeader(), body: failedData, wantMode: ModeBinary, wantID: "b-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary header names in any case", header: http.Header{"CE-SPECVERSION": {"1.0"}, "ce-type": {"rez.message.failed"}, "Ce-Source": {"rez_agent/dev"}, "CE-id": {"x"}, "cE-TiMe": {"2025-10-21T14:30:15Z"}},
			body: failedData, wantMode: ModeBinary, wantID: "x", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary without Content-Type is JSON", header: binaryHeader("Content-Type", ""), body: failedData, wantMode: ModeBinary, wantID: "b-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary +json media type", header: binaryHeader("Content-Type", "", "Content-Type", "application/vnd.rez+json; charset=UTF-8"), body: failedData, wantMode: ModeBinary, wantID: "b-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary quoted value with escapes", header: binaryHeader("Ce-Id", "", "Ce-Id", `"quoted\"id\\1"`), body: failedData, wantMode: ModeBinary, wantID: `quoted"id\1`, wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary quoted then percent-decoded", header: binaryHeader("Ce-Id", "", "Ce-Id", `"a%20b"`), body: failedData, wantMode: ModeBinary, wantID: "a b", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary lower-case percent escapes", header: binaryHeader("Ce-Id", "", "Ce-Id", "%e2%82%ac"), body: failedData, wantMode: ModeBinary, wantID: "€", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary time with an offset is stored in UTC", header: binaryHeader("Ce-Time", "", "Ce-Time", "2025-10-21T16:30:15.25+02:00"), body: failedData, wantMode: ModeBinary, wantID: "b-1", wantTime: "2025-10-21T14:30:15.25Z"},
		{name: "binary extensions and dataschema are ignored", header: binaryHeader("Ce-Dataschema", "https://example.com/s.json", "Ce-Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "Ce-Recordedat", "2020-01-01T00:00:00Z"),
			body: failedData, wantMode: ModeBinary, wantID: "b-1", wantTime: "2025-10-21T14:30:15Z", wantIgnored: "dataschema,recordedat,traceparent"},
		{name: "binary without an id derives one", header: binaryHeader("Ce-Id", ""), body: failedData, wantMode: ModeBinary, wantID: "sha256:", wantTime: "2025-10-21T14:30:15Z"},
		{name: "binary overlong UTF-8", header: binaryHeader("Ce-Id", "", "Ce-Id", "%C0%A0"), body: failedData, wantMode: ModeBinary,
			want: "id: header ce-id: percent-decoded value is not UTF-8"},
		{name: "binary unterminated quote", header: binaryHeader("Ce-Id", "", "Ce-Id", `"abc`), body: failedData, wantMode: ModeBinary,
			want: "id: header ce-id: unterminated quoted string"},
		{name: "binary header twice", header: binaryHeader("Ce-Id", "b-2"), body: failedData, wantMode: ModeBinary,
			want: "id: header ce-id is given 2 times"},
		{name: "binary data header", header: binaryHeader("Ce-Data", "{}"), body: failedData, wantMode: ModeBinary,
			want: "data: is the request body in binary mode, not a ce-data header"},
		{name: "binary empty body", header: binaryHeader(), body: "", wantMode: ModeBinary, want: "data: is required"},
		{name: "binary unsupported specversion", header: binaryHeader("Ce-Specversion", "", "Ce-Specversion", "0.3"), body: failedData, wantMode: ModeBinary,
			want: `specversion: must be "1.0", got "0.3"`},
		{name: "binary bad Content-Type", header: binaryHeader("Content-Type", "", "Content-Type", "json"), body: failedData, wantMode: ModeBinary,
			want: `datacontenttype: (the Content-Type header) must be a JSON media type (application/json or */*+json): streamfold stores JSON data only, got "json"`},
		{name: "binary Content-Type charset", header: binaryHeader("Content-Type", "", "Content-Type", "application/json; charset=iso-8859-1"), body: failedData, wantMode: ModeBinary,
			want: `datacontenttype: (the Content-Type header) charset must be utf-8, got "iso-8859-1"`},
		{name: "binary subject that is not the derived one", header: binaryHeader("Ce-Subject", "messages/other"), body: failedData, wantMode: ModeBinary,
			want: `subject: must be "messages/550e8400-e29b-41d4-a716-446655440000" (derived from data), got "messages/other"`},

		{name: "structured", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","data":` + failedData)), wantMode: ModeStructured, wantID: "s-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "structured null attributes are unset", header: structuredHeader(MediaTypeCloudEvent + "; charset=UTF-8"),
			body: string(structuredEvent(`,"id":"s-1","subject":null,"dataschema":null,"datacontenttype":null,"ext":null,"data":` + failedData)), wantMode: ModeStructured, wantID: "s-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "structured data_base64", header: structuredHeader(MediaTypeCloudEvent),
			body: string(structuredEvent(`,"id":"s-1","datacontenttype":"application/json","data_base64":"eyJtZXNzYWdlX2lkIjoiNTUwZTg0MDAtZTI5Yi00MWQ0LWE3MTYtNDQ2NjU1NDQwMDAwIiwic3RhZ2UiOiJkZXYiLCJlcnJvcl9tZXNzYWdlIjoieCJ9"`)), wantMode: ModeStructured, wantID: "s-1", wantTime: "2025-10-21T14:30:15Z"},
		{name: "structured member twice", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","id":"s-2","data":` + failedData)), wantMode: ModeStructured,
			want: "id: is given twice"},
		{name: "structured no data", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","data_base64":null`)), wantMode: ModeStructured,
			want: "data: is required"},
		{name: "structured null data", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","data":null`)), wantMode: ModeStructured,
			want: "data: is required"},
		{name: "structured data_base64 not a string", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","data_base64":{}`)), wantMode: ModeStructured,
			want: "data_base64: must be a JSON string (base64), got an object"},
		{name: "structured data_base64 not base64", header: structuredHeader(MediaTypeCloudEvent), body: string(structuredEvent(`,"id":"s-1","data_base64":"e30"`)), wantMode: ModeStructured,
			want: "data_base64: must be base64 (RFC 4648): illegal base64 data at input byte 0"},
		{name: "structured time not RFC 3339", header: structuredHeader(MediaTypeCloudEvent), body: `{"specversion":"1.0","type":"rez.message.failed","source":"rez_agent/dev","id":"s-1","time":"2025-10-21 14:30:15","data":` + failedData + `}`, wantMode: ModeStructured,
			want: `time: must be an RFC 3339 timestamp, got "2025-10-21 14:30:15"`},
		{name: "structured without specversion", header: structuredHeader(MediaTypeCloudEvent), body: `{"type":"rez.message.failed","source":"rez_agent/dev","id":"s-1","time":"2025-10-21T14:30:15Z","data":` + failedData + `}`, wantMode: ModeStructured,
			want: `specversion: is required ("1.0")`},
		{name: "structured unknown type", header: structuredHeader(MediaTypeCloudEvent), body: `{"specversion":"1.0","type":"com.example.someevent","source":"/mycontext","id":"A234-1234-1234","time":"2018-04-05T17:31:00Z","data":{"appinfoA":"abc"}}`, wantMode: ModeStructured,
			want: `type: unknown event type "com.example.someevent"`},
		{name: "structured an array", header: structuredHeader(MediaTypeCloudEvent), body: `[]`, wantMode: ModeStructured,
			want: "event: must be a JSON object (a CloudEvent in the JSON event format), got an array"},
		{name: "structured charset", header: structuredHeader(MediaTypeCloudEvent + "; charset=latin1"), body: `{}`, wantErr: ErrUnsupportedEventFormat},
		{name: "batch charset", header: structuredHeader(MediaTypeCloudEventBatch + "; charset=utf-16"), body: `[]`, wantErr: ErrUnsupportedEventFormat},
		{name: "batch format other than JSON", header: structuredHeader("application/cloudevents-batch+protobuf"), body: ``, wantErr: ErrUnsupportedEventFormat},
		{name: "batch not JSON", header: structuredHeader(MediaTypeCloudEventBatch), body: `[{]`, wantErr: ErrMalformedCloudEvents},
		{name: "empty structured body", header: structuredHeader(MediaTypeCloudEvent), body: ``, wantErr: ErrMalformedCloudEvents},
		{name: "malformed Content-Type and no ce headers", header: structuredHeader("application/"), body: `{}`, wantErr: ErrNotCloudEvent},
		{name: "plain JSON", header: structuredHeader("application/json"), body: `{}`, wantErr: ErrNotCloudEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode, evs, err := DecodeCloudEvents(tt.header, []byte(tt.body))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || evs != nil {
					t.Fatalf("err = %v with %d events, want %v", err, len(evs), tt.wantErr)
				}
				return
			}
			if err != nil || mode != tt.wantMode || len(evs) != 1 {
				t.Fatalf("DecodeCloudEvents = %s, %d events, %v; want %s, 1 event", mode, len(evs), err, tt.wantMode)
			}
			ev := evs[0]
			if tt.want != "" {
				var ve *schema.ValidationError
				if ev.Err == nil || ev.Err.Error() != tt.want || !errors.As(ev.Err, &ve) {
					t.Fatalf("event error = %v, want %q (a *schema.ValidationError)", ev.Err, tt.want)
				}
				return
			}
			if ev.Err != nil {
				t.Fatalf("event error = %v", ev.Err)
			}
			e := ev.Event
			if !strings.HasPrefix(e.ID, tt.wantID) || (tt.wantID != "sha256:" && e.ID != tt.wantID) {
				t.Errorf("id %q, want %q", e.ID, tt.wantID)
			}
			if got := e.Time.Format(time.RFC3339Nano); got != tt.wantTime {
				t.Errorf("time %s, want %s", got, tt.wantTime)
			}
			if e.Subject != "messages/550e8400-e29b-41d4-a716-446655440000" || e.Source != "rez_agent/dev" || e.Type != schema.TypeMessageFailed || e.SpecVersion != "1.0" {
				t.Errorf("event %+v", e)
			}
			if got := strings.Join(ev.Ignored, ","); got != tt.wantIgnored {
				t.Errorf("ignored %q, want %q", got, tt.wantIgnored)
			}
		})
	}
}

// encodeStructured renders a valid event in the JSON event format, data
// byte for byte.
func encodeStructured(e schema.Event) []byte {
	q := func(s string) string { b, _ := marshalNoEscape(s); return string(b) }
	return []byte(fmt.Sprintf(`{"specversion":"1.0","id":%s,"source":%s,"type":%s,"subject":%s,"time":%s,"data":%s}`,
		q(e.ID), q(e.Source), q(e.Type), q(e.Subject), q(e.Time.Format(time.RFC3339Nano)), e.Data))
}

// percentEncode encodes a header value as the HTTP binding says: space,
// double quote, percent and everything outside printable ASCII.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '"' || c == '%' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// encodeBinary renders a valid event in binary mode.
func encodeBinary(e schema.Event) (http.Header, []byte) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	for k, v := range map[string]string{"specversion": "1.0", "id": e.ID, "source": e.Source, "type": e.Type, "subject": e.Subject, "time": e.Time.Format(time.RFC3339Nano)} {
		h.Set("ce-"+k, percentEncode(v))
	}
	return h, e.Data
}

// sameEvent reports whether two decoded events are equal, data byte for
// byte but for the whitespace around it (a binary body may end in a
// newline, which the JSON format cannot carry).
func sameEvent(a, b schema.Event) bool {
	return a.ID == b.ID && a.Source == b.Source && a.Type == b.Type && a.Subject == b.Subject && a.SpecVersion == b.SpecVersion &&
		a.Time.Equal(b.Time) && bytes.Equal(bytes.TrimSpace(a.Data), bytes.TrimSpace(b.Data))
}

// parseFuzzHeader reads "Name: value" lines.
func parseFuzzHeader(s string) http.Header {
	h := http.Header{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) != "" {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

// FuzzCloudEventsDecode fuzzes the CloudEvents decoding boundary: whatever
// the headers and body, DecodeCloudEvents does not panic; a request error
// wraps one of the three sentinels and returns no event; structured and
// binary requests give exactly one event; every event error is a
// *schema.ValidationError naming its fields; and every valid event, encoded
// again in structured and in binary mode, decodes to the same event, data
// byte for byte. The seed corpus is the requests of testdata/cloudevents.
func FuzzCloudEventsDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/cloudevents/*.http")
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		head, body, _ := bytes.Cut(b, []byte("\n\n"))
		_, headers, _ := strings.Cut(string(head), "\n")
		f.Add(headers, body)
	}
	f.Add("Content-Type: application/cloudevents-batch+json", []byte(`[{"specversion":"1.0","data_base64":"e30="},1,null,{"a":{"b":[]}}]`))
	f.Fuzz(func(t *testing.T, headers string, body []byte) {
		h := parseFuzzHeader(headers)
		mode, evs, err := DecodeCloudEvents(h, body)
		if err != nil {
			if evs != nil || !(errors.Is(err, ErrNotCloudEvent) || errors.Is(err, ErrUnsupportedEventFormat) || errors.Is(err, ErrMalformedCloudEvents)) {
				t.Fatalf("request error %v with %d events", err, len(evs))
			}
			return
		}
		if mode != ModeBatch && len(evs) != 1 {
			t.Fatalf("%s mode gave %d events", mode, len(evs))
		}
		for i, ev := range evs {
			if ev.Err != nil {
				var ve *schema.ValidationError
				if !errors.As(ev.Err, &ve) || len(ve.Errors) == 0 {
					t.Fatalf("event %d: error %T %v is not a *schema.ValidationError", i, ev.Err, ev.Err)
				}
				for _, fe := range ve.Errors {
					if fe.Field == "" || fe.Rule == "" {
						t.Fatalf("event %d: field error without a field or rule: %q", i, fe.Error())
					}
				}
				continue
			}
			_, again, err := DecodeCloudEvents(structuredHeader(MediaTypeCloudEvent), encodeStructured(ev.Event))
			if err != nil || again[0].Err != nil || !sameEvent(again[0].Event, ev.Event) {
				t.Fatalf("event %d: structured round trip: %v %v\n%+v\n%+v", i, err, again[0].Err, ev.Event, again[0].Event)
			}
			bh, bb := encodeBinary(ev.Event)
			_, again, err = DecodeCloudEvents(bh, bb)
			if err != nil || again[0].Err != nil || !sameEvent(again[0].Event, ev.Event) {
				t.Fatalf("event %d: binary round trip: %v %v\n%+v\n%+v", i, err, again[0].Err, ev.Event, again[0].Event)
			}
		}
	})
}
