package simulate

import (
	"errors"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// DefaultStart is the first simulated day when Config.Start is zero: Monday
// 2026-01-05, 00:00 UTC.
var DefaultStart = time.Date(2026, time.January, 5, 0, 0, 0, 0, time.UTC)

// DefaultMix is the mix used when Config.Mix is the zero value.
var DefaultMix = Mix{Jobs: 40, Agents: 20, Albums: 20, Messages: 20}

// Bounds of the configuration.
const (
	MaxDays      = 366
	MaxMixWeight = 1_000_000
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
}

// SetDefaults fills the zero Start, Days and Mix with their defaults and
// converts Start to UTC. Events has no default.
func (c *Config) SetDefaults() {
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	c.Start = c.Start.UTC()
	if c.Days == 0 {
		c.Days = 1
	}
	if c.Mix.IsZero() {
		c.Mix = DefaultMix
	}
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
