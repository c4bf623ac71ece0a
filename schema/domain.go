package schema

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
)

// A Domain groups the event types one producing system sends (GitHub and
// RunsOn, Step Functions, the album workflow, rez_agent). Each domain
// describes itself once, in its own file of this package, with a Descriptor
// passed to registerDomain from an init function: its event types and
// payloads, the kinds of subject (aggregates) they fold into, each
// aggregate's status lifecycle, and the projection tables its folds write.
//
// Everything else that depends on the list of domains or event types reads
// this registry instead of keeping a copy: the projector's dispatch (event
// type to aggregate, status precedence), the archiver's routing (domain to
// archive table), rebuild's fresh tables, the CLI's domain list and the
// vocabularies the dashboard fetches from the API. docs/add-an-event-type.md
// walks through adding an event type.
//
// The registry is written only by init functions and is read-only after
// package initialisation, so it is safe for concurrent use.

// Status is one status of a lifecycle with its precedence rank: a subject's
// status moves only to a status of a higher rank, or of the same rank with
// a later (event time, event id) (see the projector's Precedence).
type Status struct {
	Name string `json:"name"`
	Rank int    `json:"rank"`
}

// Lifecycle is the status vocabulary of one kind of subject, in lifecycle
// order (ranks never decrease along the list).
type Lifecycle []Status

// Names returns the statuses in lifecycle order (a fresh slice).
func (l Lifecycle) Names() []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = s.Name
	}
	return out
}

// Rank returns a status's precedence rank and whether the lifecycle has it.
func (l Lifecycle) Rank(status string) (int, bool) {
	for _, s := range l {
		if s.Name == status {
			return s.Rank, true
		}
	}
	return 0, false
}

// Terminal reports whether a status is final: of the lifecycle's highest
// rank, which no later status can leave.
func (l Lifecycle) Terminal(status string) bool {
	r, ok := l.Rank(status)
	return ok && len(l) > 0 && r == l[len(l)-1].Rank
}

// Aggregate describes one kind of subject a domain's events fold into.
type Aggregate struct {
	// Kind names the aggregate ("message"); it is the projector's
	// AggregateKind, which registers the fold of that name.
	Kind string `json:"kind"`
	// Subject is the shape of its subjects, for documentation
	// ("messages/<message_id>").
	Subject string `json:"subject"`
	// Lifecycle is its status vocabulary (nil for an aggregate without a
	// status, none today).
	Lifecycle Lifecycle `json:"statuses,omitempty"`
}

// EventType describes one event type of a domain.
type EventType struct {
	// Type is the CloudEvents type ("rez.message.created").
	Type string
	// Aggregate is the Kind of the aggregate its subject is.
	Aggregate string
	// Status is the status the event moves its subject to, "" when the
	// payload decides (a Step Functions status change carries its status).
	Status string
	// New returns an empty payload to decode the event's data into.
	New func() Payload
}

// Descriptor is everything one domain declares about itself.
type Descriptor struct {
	Domain Domain
	// Doc is one line on what the domain is, for help texts and docs.
	Doc string
	// Aggregates are the kinds of subject its events fold into.
	Aggregates []Aggregate
	// Types are its event types.
	Types []EventType
	// Tables are the logical projection tables its folds write (see
	// Tables for their keys and indexes).
	Tables []string
}

// Aggregate returns the domain's aggregate of a kind.
func (d Descriptor) Aggregate(kind string) (Aggregate, bool) {
	for _, a := range d.Aggregates {
		if a.Kind == kind {
			return a, true
		}
	}
	return Aggregate{}, false
}

// TypeNames returns the domain's event types, sorted.
func (d Descriptor) TypeNames() []string {
	out := make([]string, len(d.Types))
	for i, t := range d.Types {
		out[i] = t.Type
	}
	sort.Strings(out)
	return out
}

var (
	domains    []Descriptor
	aggregates = map[string]Aggregate{}
)

// registerDomain adds a domain to the registry. It panics on a duplicate
// domain, event type or aggregate kind, on an event type whose aggregate the
// domain does not declare, and on a status its aggregate's lifecycle lacks:
// the registry is checked when the program starts, not when an event comes.
func registerDomain(d Descriptor) {
	for _, o := range domains {
		if o.Domain == d.Domain {
			panic("schema: duplicate domain " + string(d.Domain))
		}
	}
	for _, a := range d.Aggregates {
		if _, dup := aggregates[a.Kind]; dup {
			panic("schema: duplicate aggregate kind " + a.Kind)
		}
		for i := 1; i < len(a.Lifecycle); i++ {
			if a.Lifecycle[i].Rank < a.Lifecycle[i-1].Rank {
				panic("schema: aggregate " + a.Kind + ": lifecycle ranks must not decrease")
			}
		}
		aggregates[a.Kind] = a
	}
	for _, t := range d.Types {
		if _, dup := kinds[t.Type]; dup {
			panic("schema: duplicate event type " + t.Type)
		}
		a, ok := d.Aggregate(t.Aggregate)
		if !ok {
			panic(fmt.Sprintf("schema: event type %s: domain %s has no aggregate %q", t.Type, d.Domain, t.Aggregate))
		}
		if _, ok := a.Lifecycle.Rank(t.Status); t.Status != "" && !ok {
			panic(fmt.Sprintf("schema: event type %s: status %q is not in %s's lifecycle", t.Type, t.Status, a.Kind))
		}
		kinds[t.Type] = Kind{Type: t.Type, Domain: d.Domain, Aggregate: t.Aggregate, Status: t.Status, new: t.New}
	}
	domains = append(domains, d)
	slices.SortFunc(domains, func(a, b Descriptor) int { return cmp.Compare(a.Domain, b.Domain) })
}

// Domains returns every registered domain, sorted by name.
func Domains() []Descriptor { return slices.Clone(domains) }

// DomainOf returns a domain's descriptor.
func DomainOf(d Domain) (Descriptor, bool) {
	for _, o := range domains {
		if o.Domain == d {
			return o, true
		}
	}
	return Descriptor{}, false
}

// AggregateOf returns the aggregate of a kind, from whichever domain
// declares it.
func AggregateOf(kind string) (Aggregate, bool) {
	a, ok := aggregates[kind]
	return a, ok
}

// StatusOf returns the status an event type moves its subject to, and false
// for an unknown type or one whose payload decides its status.
func StatusOf(eventType string) (string, bool) {
	k, ok := kinds[eventType]
	return k.Status, ok && k.Status != ""
}

// Statuses returns the status vocabulary of an aggregate kind in lifecycle
// order (a fresh slice; nil for an unknown kind).
func Statuses(kind string) []string {
	a, ok := aggregates[kind]
	if !ok {
		return nil
	}
	return a.Lifecycle.Names()
}

// eventTypes builds the EventTypes of one aggregate and payload from
// (type, status) pairs.
func eventTypes(aggregate string, newPayload func() Payload, typeStatus ...string) []EventType {
	if len(typeStatus)%2 != 0 {
		panic("schema: eventTypes wants (type, status) pairs")
	}
	out := make([]EventType, 0, len(typeStatus)/2)
	for i := 0; i < len(typeStatus); i += 2 {
		out = append(out, EventType{Type: typeStatus[i], Aggregate: aggregate, Status: typeStatus[i+1], New: newPayload})
	}
	return out
}

// ProjectionTables returns the logical tables some domain's folds write, in
// the order of Tables(): every table but the event log and the consumers'
// own bookkeeping (dead letters, folded state, checkpoints).
func ProjectionTables() []string {
	written := map[string]bool{}
	for _, d := range domains {
		for _, t := range d.Tables {
			written[t] = true
		}
	}
	var out []string
	for _, t := range tables {
		if written[t.Logical] {
			out = append(out, t.Logical)
		}
	}
	return out
}
