package query

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxCursorLen bounds the cursor text accepted (real ones are a few hundred
// characters).
const maxCursorLen = 4096

// cursorDomain separates this MAC from any other use of the key.
const cursorDomain = "streamfold/query/cursor/v1\x00"

// fingerprint identifies a query: its pattern and parameters. A cursor
// carries it so that it cannot be replayed against another query.
type fingerprint struct {
	pattern string
	params  []string // "name=value", in a fixed order per pattern
}

func (f fingerprint) String() string {
	h := sha256.Sum256([]byte(f.pattern + "\x00" + strings.Join(f.params, "\x00")))
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

// cursorBody is what a cursor holds, before authentication.
type cursorBody struct {
	V int    `json:"v"`
	Q string `json:"q"`           // fingerprint
	P int    `json:"p,omitempty"` // phase of a multi-partition query
	// K is the LastEvaluatedKey: attribute name -> {"S": value} or {"N": value}.
	K map[string]map[string]string `json:"k,omitempty"`
	// S, for a query on a write-sharded index, is each shard's resume key
	// (shards.go): null for a shard not yet read, {} for an exhausted one.
	// Absent otherwise, so an unsharded cursor is as it always was.
	S []map[string]map[string]string `json:"s,omitempty"`
}

// cursorCodec signs and verifies cursors.
type cursorCodec struct{ key []byte }

func (c cursorCodec) mac(body []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(cursorDomain))
	m.Write(body)
	return m.Sum(nil)
}

// encode renders a cursor for the given phase and key of a query.
func (c cursorCodec) encode(fp fingerprint, phase int, key map[string]types.AttributeValue) (string, error) {
	b := cursorBody{V: 1, Q: fp.String(), P: phase}
	if len(key) > 0 {
		var err error
		if b.K, err = encodeKey(key); err != nil {
			return "", err
		}
	}
	return c.sign(b)
}

// encodeShards renders a cursor of a sharded query: the phase and each
// shard's resume key (nil: not yet read; empty: exhausted).
func (c cursorCodec) encodeShards(fp fingerprint, phase int, keys []map[string]types.AttributeValue) (string, error) {
	b := cursorBody{V: 1, Q: fp.String(), P: phase, S: make([]map[string]map[string]string, len(keys))}
	for i, key := range keys {
		if key == nil {
			continue
		}
		k, err := encodeKey(key)
		if err != nil {
			return "", err
		}
		b.S[i] = k
	}
	return c.sign(b)
}

// encodeKey renders a key as the cursor holds it (an empty map for an
// empty key).
func encodeKey(key map[string]types.AttributeValue) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(key))
	for name, av := range key {
		switch v := av.(type) {
		case *types.AttributeValueMemberS:
			out[name] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			out[name] = map[string]string{"N": v.Value}
		default:
			// Key attributes are S or N in every streamfold table.
			return nil, cursorError("key attribute " + name + " is neither S nor N")
		}
	}
	return out, nil
}

// sign renders b with its MAC.
func (c cursorCodec) sign(b cursorBody) (string, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(append(body, c.mac(body)...)), nil
}

// decode verifies a cursor for query fp and returns its phase and key. keyAttrs
// are the attribute names a LastEvaluatedKey of the query has (sorted); phases
// is how many phases the query has.
func (c cursorCodec) decode(s string, fp fingerprint, keyAttrs []string, phases int) (int, map[string]types.AttributeValue, error) {
	b, err := c.verify(s, fp, phases)
	if err != nil {
		return 0, nil, err
	}
	if b.S != nil {
		return 0, nil, cursorError("unknown format")
	}
	if len(b.K) == 0 {
		return b.P, nil, nil
	}
	key, err := decodeKey(b.K, keyAttrs)
	if err != nil {
		return 0, nil, err
	}
	return b.P, key, nil
}

// decodeShards verifies a cursor of a sharded query for fp and returns its
// phase and the resume key of each of its shards (nil: not yet read;
// empty: exhausted).
func (c cursorCodec) decodeShards(s string, fp fingerprint, keyAttrs []string, phases, shards int) (int, []map[string]types.AttributeValue, error) {
	b, err := c.verify(s, fp, phases)
	if err != nil {
		return 0, nil, err
	}
	if len(b.S) != shards || len(b.K) > 0 {
		return 0, nil, cursorError("shards do not match the query")
	}
	keys := make([]map[string]types.AttributeValue, shards)
	for i, k := range b.S {
		switch {
		case k == nil:
		case len(k) == 0:
			keys[i] = map[string]types.AttributeValue{}
		default:
			if keys[i], err = decodeKey(k, keyAttrs); err != nil {
				return 0, nil, err
			}
		}
	}
	return b.P, keys, nil
}

// verify checks a cursor's length, encoding, MAC, format, query and phase,
// and returns its body.
func (c cursorCodec) verify(s string, fp fingerprint, phases int) (cursorBody, error) {
	if len(s) > maxCursorLen {
		return cursorBody{}, cursorError("too long")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return cursorBody{}, cursorError("not base64url")
	}
	if len(raw) <= sha256.Size {
		return cursorBody{}, cursorError("truncated")
	}
	body, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(body)) {
		return cursorBody{}, cursorError("signature does not match (modified, truncated or signed with another key)")
	}
	var b cursorBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.V != 1 {
		return cursorBody{}, cursorError("unknown format")
	}
	if b.Q != fp.String() {
		return cursorBody{}, cursorError("issued for another query")
	}
	if b.P < 0 || b.P >= phases {
		return cursorBody{}, cursorError("phase out of range")
	}
	return b, nil
}

// decodeKey turns a cursor's key back into attribute values, checking
// that it names exactly keyAttrs (sorted).
func decodeKey(k map[string]map[string]string, keyAttrs []string) (map[string]types.AttributeValue, error) {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Strings(names)
	if !slices.Equal(names, keyAttrs) {
		return nil, cursorError("key attributes do not match the query")
	}
	key := make(map[string]types.AttributeValue, len(k))
	for n, v := range k {
		if len(v) != 1 {
			return nil, cursorError("malformed key")
		}
		switch {
		case v["S"] != "":
			key[n] = &types.AttributeValueMemberS{Value: v["S"]}
		case v["N"] != "":
			key[n] = &types.AttributeValueMemberN{Value: v["N"]}
		default:
			return nil, cursorError("malformed key")
		}
	}
	return key, nil
}
