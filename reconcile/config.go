package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/capacity"
	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// DynamoDBAPI is the part of the DynamoDB client Reconcile uses: Scan of
// the event table, BatchGetItem of the events to heal. Pass a metered
// client (capacity.WithMeter) and its Meter as Config.Meter to have the
// result say what the run consumed.
type DynamoDBAPI interface {
	ddbapi.Scan
	ddbapi.BatchGetItem
}

// EventRef is one archived event as the archive comparison needs it
// (archiver.EventRef).
type EventRef = archiver.EventRef

// HealStats is what Archive.Heal did (archiver.HealStats).
type HealStats = archiver.HealStats

// Archive is the part of the archive Reconcile uses (*archiver.Archive
// satisfies it).
type Archive interface {
	// EventRefs calls fn with every archived event of table's current
	// snapshot whose event date (UTC day of its time, YYYY-MM-DD) is one of
	// dates.
	EventRefs(ctx context.Context, table string, dates []string, fn func(EventRef) error) error
	// Heal archives events no stream consumer delivered, idempotently:
	// events already archived are not written again.
	Heal(ctx context.Context, evs []schema.Event) (HealStats, error)
}

// Config is what Reconcile reads and, when healing, writes through.
type Config struct {
	// DynamoDB reads the event table (required).
	DynamoDB DynamoDBAPI
	// Naming names the tables (required).
	Naming schema.Naming
	// Archive is compared with the event table; nil skips the archive
	// comparison (missingArchive, conflicts and archiveOnly stay 0).
	Archive Archive
	// Projector decides "applied" (Projector.Check) and, when healing,
	// applies what was missing (Projector.Project). Required.
	Projector *projector.Projector
	// Ops records the result (opsrec.Store.PutResult) and provides the
	// gaps the consumers noticed; nil: neither.
	Ops *opsrec.Store
	// Meter, when set, is the meter of the metered clients the run uses
	// (DynamoDB above and the projector's store): the result's ReadUnits
	// and WriteUnits are what it counted during the run.
	Meter *capacity.Meter
	// Logger logs the gaps the consumers noticed and the heal; nil
	// discards.
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Validate names the missing field.
func (c Config) Validate() error {
	switch {
	case c.DynamoDB == nil:
		return fmt.Errorf("%w: Config.DynamoDB is required", ErrInvalid)
	case c.Projector == nil:
		return fmt.Errorf("%w: Config.Projector is required", ErrInvalid)
	}
	if err := c.Naming.Validate(); err != nil {
		return fmt.Errorf("%w: Config.Naming: %w", ErrInvalid, err)
	}
	return nil
}

// Defaults of Options.
const (
	DefaultSegments     = 4
	DefaultSettle       = 2 * time.Minute
	DefaultIDsPerKind   = 20
	DefaultChunkEvents  = 1000
	DefaultBucketEvents = 200_000
	// MaxSegments bounds Options.Segments (DynamoDB allows 1,000,000; more
	// than this only multiplies requests).
	MaxSegments = 1000
)

// Options is one run's window and behaviour. Zero fields take their
// defaults.
type Options struct {
	// From and To bound the window: events recorded (recordedat) in
	// [From, To). From is required; To defaults to Now - Settle.
	From, To time.Time
	// Heal feeds the missing events through the consumers' own idempotent
	// paths, then checks them again.
	Heal bool
	// Segments is how many parallel Scan segments read the event table
	// (default 4).
	Segments int
	// Settle is how long the consumers are given: events recorded later
	// than Now - Settle are left to them (default 2 minutes). Only used to
	// default To.
	Settle time.Duration
	// IDsPerKind is how many ids each row of the result keeps per kind
	// (default 20); Report.IDs has them all.
	IDsPerKind int
	// Progress, when set, is called at most once a second while the run
	// goes, and once at the end.
	Progress func(Progress)
	// ChunkEvents is how many events one Projector.Check call judges
	// (default 1000).
	ChunkEvents int
	// BucketEvents bounds the archive comparison's memory: at most about
	// this many (subject, id, hash) entries are held at once (default
	// 200,000, some 60 MB). An event date with more events in the window
	// is compared bucket by bucket through temporary files.
	BucketEvents int
	// TempDir is where the spill files go (default os.TempDir()).
	TempDir string
}

// withDefaults fills zero fields; now is the run's start.
func (o Options) withDefaults(now time.Time) Options {
	if o.Segments == 0 {
		o.Segments = DefaultSegments
	}
	if o.Settle == 0 {
		o.Settle = DefaultSettle
	}
	if o.IDsPerKind == 0 {
		o.IDsPerKind = DefaultIDsPerKind
	}
	if o.ChunkEvents == 0 {
		o.ChunkEvents = DefaultChunkEvents
	}
	if o.BucketEvents == 0 {
		o.BucketEvents = DefaultBucketEvents
	}
	if o.To.IsZero() {
		o.To = now.Add(-o.Settle)
	}
	return o
}

// Validate names the bad field. Zero fields are valid (their defaults).
func (o Options) Validate() error {
	switch {
	case o.From.IsZero():
		return fmt.Errorf("%w: Options.From is required", ErrInvalid)
	case !o.To.IsZero() && !o.To.After(o.From):
		return fmt.Errorf("%w: Options.To (%s) must be after From (%s)", ErrInvalid, o.To.UTC().Format(time.RFC3339), o.From.UTC().Format(time.RFC3339))
	case o.Segments < 0 || o.Segments > MaxSegments:
		return fmt.Errorf("%w: Options.Segments: must be between 1 and %d, got %d", ErrInvalid, MaxSegments, o.Segments)
	case o.Settle < 0:
		return fmt.Errorf("%w: Options.Settle: must not be negative, got %s", ErrInvalid, o.Settle)
	case o.IDsPerKind < 0:
		return fmt.Errorf("%w: Options.IDsPerKind: must not be negative, got %d", ErrInvalid, o.IDsPerKind)
	case o.ChunkEvents < 0:
		return fmt.Errorf("%w: Options.ChunkEvents: must not be negative, got %d", ErrInvalid, o.ChunkEvents)
	case o.BucketEvents < 0:
		return fmt.Errorf("%w: Options.BucketEvents: must not be negative, got %d", ErrInvalid, o.BucketEvents)
	}
	return nil
}

// Progress is how far a run is.
type Progress struct {
	// Phase is "scan", "archive", "heal" or "recheck".
	Phase string
	// Scanned counts the event-table items read; Events those in the
	// window; Checked the events judged by the projector's check so far.
	Scanned, Events, Checked int64
	// MissingProjection and MissingArchive are the gaps found so far.
	MissingProjection, MissingArchive int64
	Elapsed                           time.Duration
	// EventsPerSecond is Scanned over Elapsed.
	EventsPerSecond float64
}

// Gap kinds of GapID.Kind and of opsrec.DayGaps.IDs.
const (
	KindProjection = "projection"
	KindArchive    = "archive"
	KindConflict   = "conflict"
	// KindHealed keys, in opsrec.DayGaps.IDs, the ids healed by this run.
	KindHealed = "healed"
)

// GapID is one event missing from a consumer, or conflicting.
type GapID struct {
	Domain  string `json:"domain"`
	Day     string `json:"day"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Subject string `json:"subject"`
	// Healed: the run healed it and found it applied (or archived) after.
	Healed bool `json:"healed,omitempty"`
}

// Report is one run: the result as recorded, and every gap id.
type Report struct {
	opsrec.Result
	IDs []GapID `json:"ids"`
}

// Remaining is how many gaps the report leaves (after a heal, those it
// could not heal).
func (r Report) Remaining() int { return r.Gaps() }
