package api

import (
	"net/http"

	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

// Vocabulary is the answer of GET /api/vocabulary: the words the other
// endpoints accept and answer with, from the schema registry, so that a
// client (the dashboard) hard-codes none of them.
type Vocabulary struct {
	// Domains are the event domains, sorted by name, each with its
	// aggregates and their statuses in lifecycle order.
	Domains []VocabularyDomain `json:"domains"`
	// Stages are the rez_agent message stages (messages' stage).
	Stages []string `json:"stages"`
	// WorkflowTypes are the seed 001 workflow types (workflowType).
	WorkflowTypes []string `json:"workflowTypes"`
}

// VocabularyDomain is one domain of the registry.
type VocabularyDomain struct {
	Domain     string             `json:"domain"`
	Doc        string             `json:"doc"`
	Aggregates []schema.Aggregate `json:"aggregates"`
}

// GET /api/vocabulary
func (s *server) vocabulary(*http.Request) (any, error) { return NewVocabulary(), nil }

// NewVocabulary builds the vocabulary from the schema registry.
func NewVocabulary() Vocabulary {
	v := Vocabulary{Domains: []VocabularyDomain{}, Stages: schema.Stages, WorkflowTypes: query.WorkflowTypes}
	for _, d := range schema.Domains() {
		v.Domains = append(v.Domains, VocabularyDomain{Domain: string(d.Domain), Doc: d.Doc, Aggregates: d.Aggregates})
	}
	return v
}

// GET /api/vocabulary/data: what the data holds (query.Observed), for the
// dashboard's choices and default windows: the installations and
// repositories of a bounded sample of runs, and the time span of the
// executions, messages and daily metrics rows.
func (s *server) observed(r *http.Request) (any, error) { return s.q.Observed(r.Context()) }
