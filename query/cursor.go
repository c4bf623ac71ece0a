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
		b.K = make(map[string]map[string]string, len(key))
		for name, av := range key {
			switch v := av.(type) {
			case *types.AttributeValueMemberS:
				b.K[name] = map[string]string{"S": v.Value}
			case *types.AttributeValueMemberN:
				b.K[name] = map[string]string{"N": v.Value}
			default:
				// Key attributes are S or N in every streamfold table.
				return "", cursorError("key attribute " + name + " is neither S nor N")
			}
		}
	}
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
	if len(s) > maxCursorLen {
		return 0, nil, cursorError("too long")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return 0, nil, cursorError("not base64url")
	}
	if len(raw) <= sha256.Size {
		return 0, nil, cursorError("truncated")
	}
	body, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if !hmac.Equal(sum, c.mac(body)) {
		return 0, nil, cursorError("signature does not match (modified, truncated or signed with another key)")
	}
	var b cursorBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || b.V != 1 {
		return 0, nil, cursorError("unknown format")
	}
	if b.Q != fp.String() {
		return 0, nil, cursorError("issued for another query")
	}
	if b.P < 0 || b.P >= phases {
		return 0, nil, cursorError("phase out of range")
	}
	if len(b.K) == 0 {
		return b.P, nil, nil
	}
	names := make([]string, 0, len(b.K))
	for n := range b.K {
		names = append(names, n)
	}
	sort.Strings(names)
	if !slices.Equal(names, keyAttrs) {
		return 0, nil, cursorError("key attributes do not match the query")
	}
	key := make(map[string]types.AttributeValue, len(b.K))
	for n, v := range b.K {
		if len(v) != 1 {
			return 0, nil, cursorError("malformed key")
		}
		switch {
		case v["S"] != "":
			key[n] = &types.AttributeValueMemberS{Value: v["S"]}
		case v["N"] != "":
			key[n] = &types.AttributeValueMemberN{Value: v["N"]}
		default:
			return 0, nil, cursorError("malformed key")
		}
	}
	return b.P, key, nil
}
