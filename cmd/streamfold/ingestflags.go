package main

import (
	"cmp"
	"flag"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/ingest"
)

// envMaxFutureSkew is the environment variable giving --max-future-skew's
// default (the ingest Lambda function uses ingest.DefaultMaxFutureSkew).
const envMaxFutureSkew = "STREAMFOLD_MAX_FUTURE_SKEW"

// futureSkewFlag registers --max-future-skew on a command that appends
// events (serve, emit, simulate) and returns the function that gives its
// value once the flags are parsed: a Go duration (25h, 90m), default
// $STREAMFOLD_MAX_FUTURE_SKEW or ingest.DefaultMaxFutureSkew, checked
// against ingest.AppenderConfig's bounds.
func futureSkewFlag(fs *flag.FlagSet, env *cliEnv) func() (time.Duration, error) {
	def := cmp.Or(env.getenv(envMaxFutureSkew), ingest.DefaultMaxFutureSkew.String())
	s := fs.String("max-future-skew", def, "reject an event whose time is more than this ahead of when it is appended (its recordedat), e.g. 24h (env "+envMaxFutureSkew+")")
	return func() (time.Duration, error) {
		from := envMaxFutureSkew // the value came from the environment, unless the flag was given
		if env.getenv(envMaxFutureSkew) == "" {
			from = "--max-future-skew"
		}
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "max-future-skew" {
				from = "--max-future-skew"
			}
		})
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
