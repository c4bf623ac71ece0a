package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/ingest"
)

// envMaxFutureSkew is the environment variable giving --max-future-skew's
// default (the ingest Lambda reads the same name).
const envMaxFutureSkew = "STREAMFOLD_MAX_FUTURE_SKEW"

// futureSkewFlag registers --max-future-skew on a command that appends
// events (serve, emit, simulate) and returns the function that gives its
// value once the flags are parsed: a Go duration (25h, 90m), default
// $STREAMFOLD_MAX_FUTURE_SKEW or ingest.DefaultMaxFutureSkew, checked
// against ingest.AppenderConfig's bounds.
func futureSkewFlag(fs *flag.FlagSet, env *cliEnv) func() (time.Duration, error) {
	def, from := ingest.DefaultMaxFutureSkew.String(), "--max-future-skew"
	if v := env.getenv(envMaxFutureSkew); v != "" {
		def, from = v, envMaxFutureSkew
	}
	s := fs.String("max-future-skew", def, "reject an event whose time is more than this ahead of when it is appended (its recordedat), e.g. 24h (env "+envMaxFutureSkew+")")
	return func() (time.Duration, error) {
		if *s != def {
			from = "--max-future-skew"
		}
		d, err := time.ParseDuration(*s)
		if err != nil {
			return 0, fmt.Errorf("%s: want a duration such as 24h, got %q", from, *s)
		}
		if d <= 0 || d > ingest.MaxMaxFutureSkew {
			return 0, fmt.Errorf("%s: must be positive and at most %s, got %s", from, ingest.MaxMaxFutureSkew, d)
		}
		return d, nil
	}
}
