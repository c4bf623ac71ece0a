package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDecodePayloadLikeUnmarshal: decodePayload gives what json.Unmarshal
// gives, payload and error (type, text and the fields of a type error),
// for every payload type, on valid data and on data that is not JSON or
// does not fit the payload.
func TestDecodePayloadLikeUnmarshal(t *testing.T) {
	files, err := filepath.Glob("../ingest/testdata/github/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no webhook fixtures (%v)", err)
	}
	hook, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, hook); err != nil {
		t.Fatal(err)
	}
	hook = compact.Bytes()
	datas := map[string][]byte{
		"webhook":                    hook,
		"webhook truncated":          hook[:len(hook)/2],
		"webhook trailing garbage":   append(append([]byte(nil), hook...), " x"...),
		"webhook run_attempt string": bytes.Replace(hook, []byte(`"run_attempt":`), []byte(`"run_attempt":"1","x":`), 1),
		"webhook id string":          bytes.Replace(hook, []byte(`"workflow_job":{"id":`), []byte(`"workflow_job":{"id":"7","x":`), 1),
		"empty object":               []byte(`{}`),
		"not an object":              []byte(`[1,2]`),
		"not JSON":                   []byte(`{"a":`),
		"nested type error":          []byte(`{"workflow_job":{"steps":[{"number":"one"}]},"installation":{"id":true}}`),
		"null":                       []byte(`null`),
	}
	if !bytes.Contains(datas["webhook run_attempt string"], []byte(`"run_attempt":"1"`)) || !bytes.Contains(datas["webhook id string"], []byte(`"id":"7"`)) {
		t.Fatal("fixture changed: the type-error cases no longer apply")
	}
	for typ, k := range kinds {
		for name, data := range datas {
			want, got := k.new(), k.new()
			wantErr := json.Unmarshal(data, want)
			gotErr := decodePayload(data, got)
			if describe(gotErr) != describe(wantErr) {
				t.Errorf("%s, %s: error %s, want %s", typ, name, describe(gotErr), describe(wantErr))
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: payload %+v, want %+v", typ, name, got, want)
			}
		}
	}
}

// describe renders an error with its type and, for json's errors, their fields.
func describe(err error) string {
	switch e := err.(type) {
	case nil:
		return "<nil>"
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("%T %q %q %v %d %q", e, e.Error(), e.Value, e.Type, e.Offset, e.Field)
	case *json.SyntaxError:
		return fmt.Sprintf("%T %q %d", e, e.Error(), e.Offset)
	}
	return fmt.Sprintf("%T %q", err, err.Error())
}
