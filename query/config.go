package query

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// DynamoAPI is the part of the DynamoDB client the query package calls:
// reads only. *dynamodb.Client satisfies it.
type DynamoAPI interface {
	ddbapi.GetItem
	ddbapi.Query
	ddbapi.BatchGetItem
}

// Defaults and bounds of Config.
const (
	DefaultPageSize        = 50
	DefaultMaxPageSize     = 200
	DefaultRequestsPerPage = 4
	DefaultMaxReadItems    = 100_000
	MinCursorKeyBytes      = 16
)

// Config configures a Client. Zero fields take their defaults (SetDefaults).
type Config struct {
	// CursorKey authenticates cursors (HMAC-SHA256). Required, at least 16
	// bytes; keep it secret and stable across restarts and instances, or
	// cursors issued before a change are rejected as bad.
	CursorKey []byte
	// DefaultPageSize is the page size when a request gives none. Default 50.
	DefaultPageSize int
	// MaxPageSize is the largest page a request may ask for. Default 200.
	MaxPageSize int
	// MaxRequestsPerPage bounds the Query requests one page may send to fill
	// itself (a filtered query, a multi-partition query). Default 4.
	MaxRequestsPerPage int
	// MaxReadItems bounds what patterns that read a whole key range read:
	// repository statistics, a job's events, a run's jobs. Past it the result
	// says it is truncated. Default 100,000.
	MaxReadItems int
	// GSIShards is the number of write shards of the sharded indexes
	// (schema.TablesFor), as the projector writes them: 0 or 1 (the
	// default) reads the seeds' indexes. More reads each sharded index's
	// shards in parallel and merges them (docs/api.md, "Write-sharded
	// indexes"): the same items, pages and order, N Queries per request.
	GSIShards int
	// JobFold returns an empty fold of one job, for Timeline (the job's
	// events with what each changed in its item). Wire it to the
	// projector's: func() query.JobFold { return projector.NewJobFold() }.
	// Optional: without it every pattern but the timeline works, and
	// Timeline returns ErrNoJobFold.
	JobFold func() JobFold
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	c.DefaultPageSize = cmp.Or(c.DefaultPageSize, DefaultPageSize)
	c.MaxPageSize = cmp.Or(c.MaxPageSize, DefaultMaxPageSize)
	c.MaxRequestsPerPage = cmp.Or(c.MaxRequestsPerPage, DefaultRequestsPerPage)
	c.MaxReadItems = cmp.Or(c.MaxReadItems, DefaultMaxReadItems)
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case len(c.CursorKey) < MinCursorKeyBytes:
		return fmt.Errorf("query: Config.CursorKey: must be at least %d bytes, got %d", MinCursorKeyBytes, len(c.CursorKey))
	case c.MaxPageSize < 1 || c.MaxPageSize > 1000:
		return fmt.Errorf("query: Config.MaxPageSize: must be between 1 and 1000, got %d", c.MaxPageSize)
	case c.DefaultPageSize < 1 || c.DefaultPageSize > c.MaxPageSize:
		return fmt.Errorf("query: Config.DefaultPageSize: must be between 1 and MaxPageSize (%d), got %d", c.MaxPageSize, c.DefaultPageSize)
	case c.MaxRequestsPerPage < 1 || c.MaxRequestsPerPage > 100:
		return fmt.Errorf("query: Config.MaxRequestsPerPage: must be between 1 and 100, got %d", c.MaxRequestsPerPage)
	case c.MaxReadItems < 1:
		return errors.New("query: Config.MaxReadItems: must be at least 1")
	}
	return schema.ValidateGSIShards("query: Config.GSIShards", c.GSIShards)
}
