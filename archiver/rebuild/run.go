package rebuild

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// Mode is where Run writes the projections.
type Mode string

const (
	// Fresh rebuilds into a new set of tables (Config.Target), created and
	// checked empty by PrepareFresh. It is the repair for a projection that
	// Verify finds wrong.
	Fresh Mode = "fresh"
	// InPlace folds the archive into the live tables (Config.Live), which
	// must exist. It only adds what the archive holds and the stored states
	// lack; it cannot undo a row changed behind the projector's back.
	InPlace Mode = "in-place"
)

// FreshTarget returns the tables a Fresh rebuild of the live tables writes
// by default: prefix and stage as given, an empty prefix meaning
// live.Prefix + "-rebuild" and an empty stage live.Stage.
func FreshTarget(live schema.Naming, prefix, stage string) schema.Naming {
	target := schema.Naming{Prefix: prefix, Stage: stage}
	target.Prefix = cmp.Or(target.Prefix, live.Prefix+"-rebuild")
	target.Stage = cmp.Or(target.Stage, live.Stage)
	return target
}

// API is the part of the DynamoDB client Run uses: PrepareFresh's, and the
// projector's store on the target tables.
type API interface {
	TargetAPI
	projector.DynamoAPI
}

// Config is one rebuild of the projections from the archive (Run).
type Config struct {
	// Archive yields the archived events, normally an *archiver.Archive.
	// Required.
	Archive Source
	// DynamoDB is the client of the live and target tables. Required.
	DynamoDB API
	// Mode is Fresh or InPlace. Required.
	Mode Mode
	// Live names the live tables: InPlace writes them, Fresh refuses to.
	Live schema.Naming
	// Target names the tables Fresh writes (FreshTarget gives the default);
	// it must differ from Live. InPlace leaves it zero.
	Target schema.Naming
	// Force makes Fresh go on when its target tables hold items: the
	// archive is then joined into what they hold (PrepareFresh's force).
	// InPlace leaves it false.
	Force bool
	// Options tune the fold (Rebuild); zero fields take their defaults.
	Options Options
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Archive == nil:
		return errors.New("rebuild: Config.Archive: required")
	case c.DynamoDB == nil:
		return errors.New("rebuild: Config.DynamoDB: required")
	}
	if err := c.Live.Validate(); err != nil {
		return fmt.Errorf("rebuild: Config.Live: %w", err)
	}
	switch c.Mode {
	case Fresh:
		if err := c.Target.Validate(); err != nil {
			return fmt.Errorf("rebuild: Config.Target: %w", err)
		}
		if c.Target == c.Live {
			return fmt.Errorf("rebuild: Config.Target: %s-%s-* are the live tables; use InPlace", c.Target.Prefix, c.Target.Stage)
		}
	case InPlace:
		if c.Target != (schema.Naming{}) || c.Force {
			return errors.New("rebuild: Config.Target, Config.Force: go with Fresh only")
		}
	default:
		return fmt.Errorf("rebuild: Config.Mode: must be %s or %s, got %q", Fresh, InPlace, c.Mode)
	}
	o := c.Options
	o.SetDefaults()
	return o.Validate()
}

// Tables names the tables the rebuild writes: Target for Fresh, Live for
// InPlace.
func (c Config) Tables() schema.Naming {
	if c.Mode == Fresh {
		return c.Target
	}
	return c.Live
}

// Result reports one Run.
type Result struct {
	// TablesCreated lists the physical names of the tables Fresh created.
	TablesCreated []string
	// Stats reports the fold (Rebuild); it is filled when the fold ran,
	// also when it returned an *IncompleteError.
	Stats Stats
}

// Run rebuilds the projections of cfg.Tables() from the archive. Fresh
// first prepares the target (PrepareFresh); InPlace first checks that the
// live aggregates table exists. Then the archive is folded into a
// projector.DynamoStore on those tables (Rebuild), with Rebuild's
// guarantees: idempotent, safe beside the stream projector.
//
// Every error starts with "rebuild: " and wraps its cause: ErrTargetNotEmpty
// (Fresh without Force onto tables that hold items), ErrIncomplete (some
// subjects not projected; the Result's Stats are valid and running it
// again retries them), or the failure to validate cfg, to prepare or find
// the tables, or to read the archive.
func Run(ctx context.Context, cfg Config) (Result, error) {
	var res Result
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	target := cfg.Tables()
	if cfg.Mode == Fresh {
		prepared, err := PrepareFresh(ctx, cfg.DynamoDB, target, cfg.Force)
		for _, r := range prepared {
			if r.Created {
				res.TablesCreated = append(res.TablesCreated, r.Name)
			}
		}
		switch {
		case errors.Is(err, ErrTargetNotEmpty):
			return res, fmt.Errorf("rebuild: %w", err)
		case err != nil:
			return res, fmt.Errorf("rebuild: prepare %s-%s tables: %w", target.Prefix, target.Stage, err)
		}
	} else {
		name := target.Table(schema.TableAggregates)
		if _, err := cfg.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}); err != nil {
			return res, fmt.Errorf("rebuild: live table %s: %w", name, err)
		}
	}
	store, err := projector.NewDynamoStore(cfg.DynamoDB, target)
	if err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	res.Stats, err = Rebuild(ctx, cfg.Archive, store, cfg.Options)
	if err != nil {
		return res, fmt.Errorf("rebuild: %w", err)
	}
	return res, nil
}
