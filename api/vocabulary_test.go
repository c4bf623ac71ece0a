package api

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/streamfold/streamfold/schema"
)

// TestVocabulary: GET /api/vocabulary needs the token and answers the
// registry's statuses in lifecycle order, the stages and the workflow types,
// without a DynamoDB request.
func TestVocabulary(t *testing.T) {
	db := &fakeDB{}
	h := newHandler(t, db, nil)
	if r := do(t, h, "GET", "/api/vocabulary", ""); r.status != 401 {
		t.Fatalf("without a token: %d", r.status)
	}
	if r := do(t, h, "GET", "/api/vocabulary?kind=message", bearer); r.status != 400 || r.errorField("param") != "kind" {
		t.Fatalf("unknown parameter: %s", r.raw)
	}
	r := do(t, h, "GET", "/api/vocabulary", bearer)
	var v Vocabulary
	if err := json.Unmarshal([]byte(r.raw), &v); r.status != 200 || err != nil {
		t.Fatalf("%d %v: %s", r.status, err, r.raw)
	}
	statuses := map[string][]string{}
	for _, d := range v.Domains {
		for _, a := range d.Aggregates {
			statuses[a.Kind] = a.Lifecycle.Names()
		}
	}
	for _, kind := range []string{schema.AggregateMessage, schema.AggregateJob, schema.AggregateAgentExecution} {
		if want := schema.Statuses(kind); len(want) == 0 || !slices.Equal(statuses[kind], want) {
			t.Errorf("%s statuses %v, want %v", kind, statuses[kind], want)
		}
	}
	if !slices.Equal(v.Stages, schema.Stages) || len(v.WorkflowTypes) != 2 || len(v.Domains) != len(schema.Domains()) {
		t.Errorf("vocabulary %s", r.raw)
	}
	if len(db.queries) != 0 {
		t.Error("the vocabulary read DynamoDB")
	}
}
