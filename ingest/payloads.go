package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/streamfold/streamfold/schema"
)

// PayloadPolicy says what becomes of a Step Functions execution's input,
// output and cause (the detail members "input", "output" and "cause" of
// its EventBridge events) when the event is appended. For agent state
// machines these hold the agents' prompts, answers and failure texts: the
// event table, the stream and the Parquet archive keep what is appended,
// and every Athena user of the archive can read it.
type PayloadPolicy string

// The payload policies.
const (
	// PayloadsHash replaces each of the three strings by "sha256:" and the
	// hex SHA-256 of its text: equal payloads still compare equal, their
	// contents are not stored. It is the default.
	PayloadsHash PayloadPolicy = "hash"
	// PayloadsDrop replaces each by null.
	PayloadsDrop PayloadPolicy = "drop"
	// PayloadsKeep stores them verbatim.
	PayloadsKeep PayloadPolicy = "keep"
)

// DefaultPayloadPolicy is the policy of a zero PayloadPolicy.
const DefaultPayloadPolicy = PayloadsHash

// payloadMembers are the detail members a PayloadPolicy applies to. "error"
// (an error name such as States.TaskFailed) is kept: it carries no user
// data and the projections need none of these.
var payloadMembers = map[string]bool{"input": true, "output": true, "cause": true}

// ParsePayloadPolicy parses "hash", "drop" or "keep"; "" is the default.
func ParsePayloadPolicy(s string) (PayloadPolicy, error) {
	switch p := PayloadPolicy(s); p {
	case "":
		return DefaultPayloadPolicy, nil
	case PayloadsHash, PayloadsDrop, PayloadsKeep:
		return p, nil
	}
	return "", fmt.Errorf("unknown payload policy %q: want hash, drop or keep", s)
}

func (p PayloadPolicy) orDefault() PayloadPolicy {
	if p == "" {
		return DefaultPayloadPolicy
	}
	return p
}

// hashPrefix starts a hashed payload.
const hashPrefix = "sha256:"

// applyPayloadPolicy returns the member's new raw value under p, and
// whether it changed. Only JSON strings change; null and any other value
// (which Step Functions never sends there) are kept. Hashing is
// idempotent: a value that is already a hash is left alone, so a stored
// event converted back (ToEventBridge) and appended again is unchanged.
func applyPayloadPolicy(p PayloadPolicy, raw json.RawMessage) (json.RawMessage, bool) {
	p = p.orDefault()
	if p == PayloadsKeep || len(raw) == 0 || raw[0] != '"' {
		return raw, false
	}
	if p == PayloadsDrop {
		return json.RawMessage("null"), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || isPayloadHash(s) {
		return raw, false
	}
	sum := sha256.Sum256([]byte(s))
	out, _ := json.Marshal(hashPrefix + hex.EncodeToString(sum[:]))
	return out, true
}

// isPayloadHash reports whether s is "sha256:" and 64 lower-case hex digits.
func isPayloadHash(s string) bool {
	h, ok := strings.CutPrefix(s, hashPrefix)
	if !ok || len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// ApplyPayloadPolicy applies p to an event however it arrived: for an agent
// execution's event (type schema.TypeExecutionStatusChange) it treats the
// input, output and cause members of its data (the EventBridge detail) as
// FromEventBridge does, keeping every other member byte for byte; data that
// is not a JSON object, and events of other types, are left alone. The
// Appender calls it for every event, so the policy holds on every route
// (POST /events, /eventbridge, emit, simulate, replay), not only for events
// that came through the Step Functions adapter. It is idempotent: a hash is
// not hashed again.
func ApplyPayloadPolicy(e *schema.Event, p PayloadPolicy) {
	if e.Type != schema.TypeExecutionStatusChange {
		return
	}
	if data, err := rewriteDetail(e.Data, nil, p); err == nil {
		e.Data = data
	}
}
