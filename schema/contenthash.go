package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// AttrContentHash is the event-table attribute holding ContentHash of the
// event, written with the item by the ingest Appender. Items appended before
// it existed lack it; the Appender then computes the hash of the stored item
// (EventFromItem) when it needs one.
const AttrContentHash = "contenthash"

// ContentHashPrefix starts every ContentHash value.
const ContentHashPrefix = "sha256:"

// ContentHash returns the hash of an event's content: "sha256:" and the hex
// SHA-256 of its canonical content, the JSON object
//
//	{"data":D,"source":S,"subject":J,"time":T,"type":Y}
//
// with its members in that (sorted) order and no insignificant whitespace,
// where T is the time in UTC as RFC 3339 with nanoseconds and no trailing
// zeros (2026-11-20T10:00:00.5Z), and D is data in canonical form: every
// object's members sorted by key, no insignificant whitespace, strings
// re-escaped as encoding/json does without HTML escaping, numbers exactly as
// written (1 and 1.0 differ), and of duplicate keys only the last. The id
// (the key) and what the writer or the transport adds (specversion,
// recordedat, ttl, the data encoding, a datacontenttype) are not content.
// Two events of the same (subject, id) are the same event exactly when their
// content hashes are equal.
func ContentHash(e Event) (string, error) {
	data, err := canonicalJSON(e.Data)
	if err != nil {
		return "", fmt.Errorf("schema: content hash of %s/%s: data: %w", e.Subject, e.ID, err)
	}
	head, err := marshalNoHTML(struct {
		Source  string `json:"source"`
		Subject string `json:"subject"`
		Time    string `json:"time"`
		Type    string `json:"type"`
	}{e.Source, e.Subject, e.Time.UTC().Format(time.RFC3339Nano), e.Type})
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(`{"data":`))
	h.Write(data)
	h.Write([]byte{','})
	h.Write(head[1:]) // the other members, in key order, and the closing brace
	return ContentHashPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// canonicalJSON renders JSON text in the canonical form of ContentHash.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return marshalNoHTML(v)
}

// marshalNoHTML is json.Marshal (map keys sorted) without HTML escaping.
func marshalNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
