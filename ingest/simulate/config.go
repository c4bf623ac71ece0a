package simulate

import (
	"cmp"
	"errors"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// DefaultStart is the first simulated day when Config.Start is zero: Monday
// 2026-01-05, 00:00 UTC.
var DefaultStart = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// DefaultMix is the mix used when Config.Mix is the zero value.
var DefaultMix = Mix{Jobs: 40, Agents: 20, Albums: 20, Messages: 20}

// DefaultRate is the arrival rate, in events per second of simulated time,
// of OrderTime when Config.Rate is zero.
const DefaultRate = 100

// Bounds of the configuration.
const (
	MaxDays      = 366
	MaxMixWeight = 1_000_000
	MaxRate      = 100_000
)

// Order is how the events of different aggregates follow each other (see
// the package documentation).
type Order string

const (
	// OrderTime (the default) is a busy production stream: each day of the
	// window holds a slice of a steady stream at Config.Rate events per
	// second, so many aggregates are in flight at once and their events
	// interleave as their times say; lifecycles are partial at both ends of
	// each slice.
	OrderTime Order = "time"
	// OrderSubject is the thin order of the first generator: aggregates are
	// spread over every hour of the window, so few are in flight at once and
	// most of an aggregate's events arrive next to each other; a projector
	// batch then folds a whole lifecycle into one write.
	OrderSubject Order = "subject"
)

// Payloads is the size of the GitHub workflow_job webhook bodies.
type Payloads string

const (
	// PayloadsTrimmed (the default) keeps, around the workflow_job object,
	// the fields of the repository, organization, sender and installation
	// objects that streamfold reads and a few others: 1.1-2.6 KB. It is the
	// default because it projects exactly as the full bodies do at a third
	// of the bytes, which keeps tests and demos light; what storing,
	// archiving or sending the events costs is measured with PayloadsFull.
	PayloadsTrimmed Payloads = "trimmed"
	// PayloadsFull sends the bodies GitHub sends: the repository (with its
	// owner), organization, sender and installation objects with all their
	// URL and metadata fields, as in GitHub's documented example payloads:
	// 7-11 KB minified. They decode to the same schema.WorkflowJobWebhook as
	// the trimmed ones, so they project the same; only the stored and
	// archived bytes grow. Full and trimmed runs of one Config differ only
	// in the data of these webhooks.
	PayloadsFull Payloads = "full"
)

var (
	minStart = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
	maxStart = time.Date(2099, time.December, 31, 0, 0, 0, 0, time.UTC)
)

// Mix holds the relative weights of the four domains, in events: with
// {Jobs: 40, Agents: 20, Albums: 20, Messages: 20} about 40% of the events
// are GitHub events. A zero weight leaves its domain out; the zero Mix means
// DefaultMix.
type Mix struct {
	Jobs     int // GitHub workflow jobs, deployments and RunsOn runners (schema.DomainGitHub)
	Agents   int // Step Functions executions (schema.DomainStates)
	Albums   int // sf/ldf album workflow executions and tasks (schema.DomainAlbums)
	Messages int // rez_agent messages (schema.DomainMessages)
}

// IsZero reports whether every weight is zero.
func (m Mix) IsZero() bool { return m == Mix{} }

// Config configures a simulation. Call SetDefaults, then Validate; Generate
// and Stream do both on their own copy.
type Config struct {
	// Seed selects the workload: the same seed and configuration give
	// byte-identical events.
	Seed int64
	// Events is the exact number of events produced, redeliveries included.
	// It must be at least 1.
	Events int
	// Start is the first day, a UTC midnight (default DefaultStart).
	Start time.Time
	// Days is how many days, from Start, the events' times spread over
	// (default 1, at most 366).
	Days int
	// Mix weighs the domains (zero value: DefaultMix).
	Mix Mix
	// Order is how the aggregates' events interleave (default OrderTime).
	Order Order
	// Rate is, in OrderTime, how many events per second of simulated time
	// arrive during each day's slice (default DefaultRate, at most MaxRate):
	// Events/Rate seconds of traffic in all, shared by the days in
	// proportion to their activity (a Saturday or Sunday gets less than half
	// of a weekday). A day whose share would take more than 20 hours gets 20
	// hours, at a higher rate. It must be zero in OrderSubject, whose pace
	// follows from Events and Days.
	Rate int
	// GitHubPayloads is the size of the workflow_job webhook bodies
	// (default PayloadsTrimmed).
	GitHubPayloads Payloads
}

// SetDefaults fills the zero Start, Days, Mix, Order, GitHubPayloads and,
// in OrderTime, Rate with their defaults and converts Start to UTC. Events
// has no default.
func (c *Config) SetDefaults() {
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	c.Start = c.Start.UTC()
	c.Days = cmp.Or(c.Days, 1)
	if c.Mix.IsZero() {
		c.Mix = DefaultMix
	}
	c.Order = cmp.Or(c.Order, OrderTime)
	if c.Order == OrderTime && c.Rate == 0 {
		c.Rate = DefaultRate
	}
	c.GitHubPayloads = cmp.Or(c.GitHubPayloads, PayloadsTrimmed)
}

// Validate checks the configuration as it is (zero Start and Days are errors;
// call SetDefaults first). The error names the bad field, e.g.
// "simulate: Config.Days: must be between 1 and 366".
func (c Config) Validate() error {
	switch {
	case c.Events < 1:
		return errors.New("simulate: Config.Events: must be at least 1")
	case c.Start.Before(minStart) || c.Start.After(maxStart):
		return errors.New("simulate: Config.Start: must be between 2000-01-01 and 2099-12-31")
	case !c.Start.Equal(c.Start.UTC().Truncate(24 * time.Hour)):
		return errors.New("simulate: Config.Start: must be a UTC midnight")
	case c.Days < 1 || c.Days > MaxDays:
		return errors.New("simulate: Config.Days: must be between 1 and 366")
	case c.Order != OrderTime && c.Order != OrderSubject:
		return errors.New(`simulate: Config.Order: must be "time" or "subject"`)
	case c.Order == OrderTime && (c.Rate < 1 || c.Rate > MaxRate):
		return errors.New("simulate: Config.Rate: must be between 1 and 100000")
	case c.Order == OrderSubject && c.Rate != 0:
		return errors.New(`simulate: Config.Rate: must be 0 with Order "subject"`)
	case c.GitHubPayloads != PayloadsTrimmed && c.GitHubPayloads != PayloadsFull:
		return errors.New(`simulate: Config.GitHubPayloads: must be "trimmed" or "full"`)
	}
	for _, w := range []struct {
		name string
		v    int
	}{{"Jobs", c.Mix.Jobs}, {"Agents", c.Mix.Agents}, {"Albums", c.Mix.Albums}, {"Messages", c.Mix.Messages}} {
		if w.v < 0 || w.v > MaxMixWeight {
			return errors.New("simulate: Config.Mix." + w.name + ": must be between 0 and 1000000")
		}
	}
	return nil
}

// Stats describes what Generate or Stream produced. Every count is over the
// emitted events, redeliveries included.
type Stats struct {
	// Events is the number of events emitted (Config.Events on success).
	Events int
	// Redeliveries counts events whose subject and id were already emitted:
	// the duplicates an appender must detect.
	Redeliveries int
	// OutOfOrder counts events, redeliveries excluded, whose time is before
	// the time of an event of the same subject emitted earlier.
	OutOfOrder int
	// PerDomain and PerType count events by domain and by event type.
	PerDomain map[schema.Domain]int
	PerType   map[string]int
}
