package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/streamfold/streamfold/query"
)

// MinTokenLength is the shortest bearer token Config accepts.
const MinTokenLength = 16

// Config configures the handler.
type Config struct {
	// Queries answers the access patterns. Required.
	Queries *query.Client
	// Token is the bearer token every /api/ request but /api/health must
	// present. Required (at least MinTokenLength characters) unless
	// AllowUnauthenticated is set.
	Token string
	// AllowUnauthenticated serves /api/ without a token (tests, a private
	// network). Token must then be empty.
	AllowUnauthenticated bool
	// Dashboard is mounted at "/" and served without a token; nil serves
	// nothing there (404).
	Dashboard http.Handler
	// MaxPageSize is the largest ?limit= accepted; 0 means the query
	// client's maximum, which it may not exceed.
	MaxPageSize int
	// Logger receives one line per request (never the token) and the
	// details of internal errors. Default slog.Default().
	Logger *slog.Logger
	// Operations answers /api/operations and /api/operations/deadletters
	// (an *opsview.View); nil answers them 404.
	Operations Operations
	// Now is the clock of relative windows (stuckHours, stats hours, the
	// operations' ages and default windows), sent
	// on every response as NowHeader. Default time.Now.
	Now func() time.Time
}

// SetDefaults fills zero fields.
func (c *Config) SetDefaults() {
	if c.MaxPageSize == 0 && c.Queries != nil {
		c.MaxPageSize = c.Queries.MaxPageSize()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Queries == nil:
		return errors.New("api: Config.Queries: is required")
	case c.AllowUnauthenticated && c.Token != "":
		return errors.New("api: Config.Token: must be empty when AllowUnauthenticated is set")
	case !c.AllowUnauthenticated && len(c.Token) < MinTokenLength:
		return fmt.Errorf("api: Config.Token: must be at least %d characters (or set AllowUnauthenticated)", MinTokenLength)
	case c.MaxPageSize < 0 || c.MaxPageSize > c.Queries.MaxPageSize():
		return fmt.Errorf("api: Config.MaxPageSize: must be between 0 (default) and the query client's %d, got %d", c.Queries.MaxPageSize(), c.MaxPageSize)
	}
	return nil
}
