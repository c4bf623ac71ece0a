package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestPayloadPolicy: an agent execution's input, output and cause (its
// prompts, answers and failure texts) are hashed by default, dropped or
// kept on request; every other member stays byte for byte, null stays
// null, and hashing what is already hashed changes nothing.
func TestPayloadPolicy(t *testing.T) {
	ev := loadEventBridge(t, "eventbridge/execution_failed_full.json")
	var detail map[string]json.RawMessage
	if err := json.Unmarshal(ev.Detail, &detail); err != nil {
		t.Fatal(err)
	}
	sha := func(raw json.RawMessage) string {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(s))
		return `"sha256:` + hex.EncodeToString(sum[:]) + `"`
	}
	tags := map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}
	tests := []struct {
		policy PayloadPolicy
		want   map[string]string
	}{
		{"", map[string]string{"input": sha(detail["input"]), "output": "null", "cause": sha(detail["cause"])}},
		{PayloadsHash, map[string]string{"input": sha(detail["input"]), "output": "null", "cause": sha(detail["cause"])}},
		{PayloadsDrop, map[string]string{"input": "null", "output": "null", "cause": "null"}},
		{PayloadsKeep, map[string]string{"input": string(detail["input"]), "output": "null", "cause": string(detail["cause"])}},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			e, err := FromEventBridge(ev, tags, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(e.Data, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range detail {
				want, payload := tt.want[k]
				if !payload {
					want = string(v)
				}
				if string(got[k]) != want {
					t.Errorf("%s = %s, want %s", k, got[k], want)
				}
			}
			if string(got["error"]) != `"States.TaskFailed"` {
				t.Errorf("error = %s: the error name is kept", got["error"])
			}
			// Appending it again (a replay converts the stored event back)
			// changes nothing.
			back, err := ToEventBridge(e)
			if err != nil {
				t.Fatal(err)
			}
			again, err := FromEventBridge(back, nil, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Data, e.Data) {
				t.Errorf("a second pass changed the data:\n%s\n%s", e.Data, again.Data)
			}
		})
	}
}

func TestParsePayloadPolicy(t *testing.T) {
	for in, want := range map[string]PayloadPolicy{"": PayloadsHash, "hash": PayloadsHash, "drop": PayloadsDrop, "keep": PayloadsKeep} {
		if got, err := ParsePayloadPolicy(in); err != nil || got != want {
			t.Errorf("ParsePayloadPolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParsePayloadPolicy("redact"); err == nil || err.Error() != `unknown payload policy "redact": want hash, drop or keep` {
		t.Errorf("ParsePayloadPolicy(redact) = %v", err)
	}
}

func TestIsPayloadHash(t *testing.T) {
	good := "sha256:" + hex.EncodeToString(make([]byte, 32))
	for s, want := range map[string]bool{good: true, "sha256:abc": false, "sha256:" + "G" + good[8:]: false,
		"sha256:" + hex.EncodeToString(bytes.Repeat([]byte{0xAB}, 32))[:63] + "F": false, "plain text": false} {
		if got := isPayloadHash(s); got != want {
			t.Errorf("isPayloadHash(%q) = %v, want %v", s, got, want)
		}
	}
}
