package localrun

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/toolkit"
)

// valid is Options as the CLI's defaults give them.
func valid() Options {
	return Options{BatchSize: 100, MaxRetries: 3, Bisect: true, HeartbeatInterval: time.Minute}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Options)
		want   string // "" is valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"zero batch size is the default", func(o *Options) { o.BatchSize = 0 }, ""},
		{"latest", func(o *Options) { o.StartingPosition = streamrun.Latest }, ""},
		{"at_timestamp", func(o *Options) { o.StartingPosition = "at_timestamp" }, `run: Options.StartingPosition: must be trim_horizon or latest, got "at_timestamp"`},
		{"no heartbeat", func(o *Options) { o.HeartbeatInterval = 0 }, "run: Options.HeartbeatInterval: must be positive, got 0s"},
		{"negative shards", func(o *Options) { o.GSIShards = -1 }, "run: Options.GSIShards: must not be negative"},
		{"batch too large", func(o *Options) { o.BatchSize = 10001 }, "run: Options.Projector: streamrun: Config.BatchSize: must be between 1 and 10000"},
		{"window too long", func(o *Options) { o.BatchWindow = 301 * time.Second }, "run: Options.Projector: streamrun: Config.BatchWindow"},
		{"reserved consumer", func(o *Options) { o.Consumer = "ops#x" }, "Config.Consumer"},
		{"archiver batch too large", func(o *Options) { o.Archive = &archiver.Archive{}; o.ArchiveBatchSize = 20000 }, "run: Options.Archiver: streamrun: Config.BatchSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.modify(&o)
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, toolkit.ErrInvalidOptions) {
				t.Fatalf("Validate: %v, want an invalid-options error with %q", err, tt.want)
			}
		})
	}
}

func TestConfigs(t *testing.T) {
	o := valid()
	o.UntilCaughtUp, o.StartingPosition, o.BatchWindow = true, streamrun.Latest, time.Second
	got := o.Configs()
	if len(got) != 1 {
		t.Fatalf("%d consumers without an archive, want the projector only", len(got))
	}
	want := streamrun.Config{Consumer: "projector", BatchSize: 100, BatchWindow: time.Second, MaxRetryAttempts: 3, BisectOnError: true,
		UntilCaughtUp: true, StartingPosition: streamrun.Latest, HeartbeatInterval: time.Minute}
	if !sameConfig(got[0], want) {
		t.Errorf("projector %+v, want %+v", got[0], want)
	}

	o.Archive, o.Consumer, o.ArchiveBatchWindow = &archiver.Archive{}, "projector-new", 2*time.Second
	got = o.Configs()
	if len(got) != 2 || got[0].Consumer != "projector-new" {
		t.Fatalf("with an archive: %+v, want the projector, then the archiver", got)
	}
	// The archiver shares the stream settings and has its own batches and
	// retries: 5000 records, the highest retry count.
	want = streamrun.Config{Consumer: "archiver", BatchSize: DefaultArchiveBatchSize, BatchWindow: 2 * time.Second, MaxRetryAttempts: streamrun.MaxMaxRetryAttempts,
		BisectOnError: true, UntilCaughtUp: true, StartingPosition: streamrun.Latest, HeartbeatInterval: time.Minute}
	if !sameConfig(got[1], want) {
		t.Errorf("archiver %+v, want %+v", got[1], want)
	}
	if c := (Options{HeartbeatInterval: time.Second}).Configs()[0]; c.StartingPosition != streamrun.TrimHorizon || c.Consumer != DefaultConsumer {
		t.Errorf("zero options: %+v, want trim_horizon and consumer projector", c)
	}
}

// sameConfig compares the plain fields of two configs (Configs leaves the
// func fields nil).
func sameConfig(a, b streamrun.Config) bool {
	return a.OnPoison == nil && a.Progress == nil && a.Ops == nil && a.Logger == nil &&
		a.Consumer == b.Consumer && a.BatchSize == b.BatchSize && a.BatchWindow == b.BatchWindow && a.MaxRetryAttempts == b.MaxRetryAttempts &&
		a.BisectOnError == b.BisectOnError && a.UntilCaughtUp == b.UntilCaughtUp && a.StartingPosition == b.StartingPosition &&
		a.HeartbeatInterval == b.HeartbeatInterval && a.StreamARN == ""
}
