package rebuild

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// noTables is a DynamoDB client on which no table exists; any other call
// panics (the embedded API is nil).
type noTables struct{ API }

func (noTables) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return nil, &types.ResourceNotFoundException{Message: new(string)}
}

func TestFreshTarget(t *testing.T) {
	live := schema.Naming{Prefix: "sf", Stage: "prod"}
	tests := []struct {
		name          string
		prefix, stage string
		want          schema.Naming
	}{
		{"defaults", "", "", schema.Naming{Prefix: "sf-rebuild", Stage: "prod"}},
		{"prefix", "other", "", schema.Naming{Prefix: "other", Stage: "prod"}},
		{"stage", "", "dev", schema.Naming{Prefix: "sf-rebuild", Stage: "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FreshTarget(live, tt.prefix, tt.stage); got != tt.want {
				t.Fatalf("FreshTarget = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	live := schema.Naming{Prefix: "sf", Stage: "dev"}
	fresh := schema.Naming{Prefix: "sf-rebuild", Stage: "dev"}
	ok := Config{Archive: Events{}, DynamoDB: noTables{}, Mode: Fresh, Live: live, Target: fresh}
	with := func(f func(c *Config)) Config { c := ok; f(&c); return c }
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"fresh", ok, ""},
		{"in place", with(func(c *Config) { c.Mode, c.Target = InPlace, schema.Naming{} }), ""},
		{"no archive", with(func(c *Config) { c.Archive = nil }), "rebuild: Config.Archive: required"},
		{"no client", with(func(c *Config) { c.DynamoDB = nil }), "rebuild: Config.DynamoDB: required"},
		{"bad live", with(func(c *Config) { c.Live.Stage = "qa" }), "rebuild: Config.Live: "},
		{"no mode", with(func(c *Config) { c.Mode = "" }), `rebuild: Config.Mode: must be fresh or in-place, got ""`},
		{"bad target", with(func(c *Config) { c.Target.Stage = "qa" }), "rebuild: Config.Target: "},
		{"fresh onto live", with(func(c *Config) { c.Target = live }), "rebuild: Config.Target: sf-dev-* are the live tables; use InPlace"},
		{"in place with a target", with(func(c *Config) { c.Mode = InPlace }), "rebuild: Config.Target, Config.Force: go with Fresh only"},
		{"in place with force", with(func(c *Config) { c.Mode, c.Target, c.Force = InPlace, schema.Naming{}, true }), "rebuild: Config.Target, Config.Force: go with Fresh only"},
		{"bad options", with(func(c *Config) { c.Options.Workers = 65 }), "rebuild: Options.Workers: must be between 1 and 64, got 65"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q...", err, tt.want)
			}
			if _, rerr := Run(context.Background(), tt.cfg); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("Run err = %v, want the Validate error", rerr)
			}
		})
	}
}

func TestConfigTables(t *testing.T) {
	live := schema.Naming{Prefix: "sf", Stage: "dev"}
	fresh := schema.Naming{Prefix: "sf-rebuild", Stage: "dev"}
	if got := (Config{Mode: Fresh, Live: live, Target: fresh}).Tables(); got != fresh {
		t.Errorf("fresh writes %+v, want %+v", got, fresh)
	}
	if got := (Config{Mode: InPlace, Live: live}).Tables(); got != live {
		t.Errorf("in place writes %+v, want %+v", got, live)
	}
}

func TestRunInPlaceNeedsLiveTables(t *testing.T) {
	cfg := Config{Archive: Events{}, DynamoDB: noTables{}, Mode: InPlace, Live: schema.Naming{Prefix: "sf", Stage: "dev"}}
	_, err := Run(context.Background(), cfg)
	var nf *types.ResourceNotFoundException
	if want := "rebuild: live table sf-dev-aggregates: "; !errors.As(err, &nf) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Run = %v, want %q wrapping ResourceNotFoundException", err, want)
	}
}

// TestRunDynamoDB: Run Fresh creates and fills the target tables; again
// without Force it is refused with ErrTargetNotEmpty; with Force, and in
// place into the rebuilt tables, it changes nothing.
func TestRunDynamoDB(t *testing.T) {
	c := testenv.Clients(t)
	ctx := context.Background()
	evs := workload(t, 23, 300, recentStart())
	live := schema.Naming{Prefix: "sf", Stage: "dev"}
	target := freshNaming(t)
	cfg := Config{Archive: Events(evs), DynamoDB: c.DynamoDB, Mode: Fresh, Live: live, Target: target}

	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run fresh: %v", err)
	}
	if len(res.TablesCreated) != len(schema.Tables()) {
		t.Fatalf("tables created %v, want every table", res.TablesCreated)
	}
	if res.Stats.Events != len(evs) || res.Stats.Changed == 0 || res.Stats.Failed != 0 {
		t.Fatalf("stats %+v", res.Stats)
	}

	res, err = Run(ctx, cfg)
	if !errors.Is(err, ErrTargetNotEmpty) || len(res.TablesCreated) != 0 {
		t.Fatalf("Run fresh again: %v, created %v; want ErrTargetNotEmpty and nothing created", err, res.TablesCreated)
	}
	cfg.Force = true
	if res, err = Run(ctx, cfg); err != nil || res.Stats.Changed != 0 {
		t.Fatalf("Run fresh with force: %v, stats %+v; want no change", err, res.Stats)
	}
	inPlace := Config{Archive: Events(evs), DynamoDB: c.DynamoDB, Mode: InPlace, Live: target}
	if res, err = Run(ctx, inPlace); err != nil || res.Stats.Changed != 0 || res.TablesCreated != nil {
		t.Fatalf("Run in place: %v, stats %+v, created %v; want no change", err, res.Stats, res.TablesCreated)
	}
}
