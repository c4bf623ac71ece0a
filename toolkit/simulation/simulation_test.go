package simulation

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/toolkit"
)

func TestValidate(t *testing.T) {
	ok := func() Options {
		return Options{Config: simulate.Config{Events: 10}, ShapeWindow: 100}
	}
	tests := []struct {
		name  string
		edit  func(*Options)
		field string // "" is valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"rate with subject order", func(o *Options) { o.Config.Order, o.Config.Rate, o.RateGiven = simulate.OrderSubject, 5, true }, "Config.Rate"},
		{"defaulted rate with subject order", func(o *Options) { o.Config.Order, o.Config.Rate = simulate.OrderSubject, 100 }, ""},
		{"rate zero given", func(o *Options) { o.RateGiven = true }, "Config.Rate"},
		{"rate too high", func(o *Options) { o.Config.Rate, o.RateGiven = simulate.MaxRate+1, true }, "Config.Rate"},
		{"unknown order", func(o *Options) { o.Config.Order = "random" }, "Config.Order"},
		{"too many days", func(o *Options) { o.Config.Days = 400 }, "Config.Days"},
		{"shape window", func(o *Options) { o.ShapeWindow = 0 }, "ShapeWindow"},
		{"payloads", func(o *Options) { o.SFNPayloads = "all" }, "SFNPayloads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok()
			tt.edit(&o)
			err := o.Validate()
			var oe *toolkit.OptionsError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.field != "" && (!errors.As(err, &oe) || oe.Field != tt.field || !errors.Is(err, toolkit.ErrInvalidOptions)):
				t.Fatalf("Validate: %v, want an OptionsError on %s", err, tt.field)
			}
		})
	}
}

// TestDefaultStart: without a start, the workload ends the day before Now.
func TestDefaultStart(t *testing.T) {
	o := Options{Config: simulate.Config{Events: 1, Days: 3}, ShapeWindow: 1, Now: time.Date(2030, 1, 15, 20, 0, 0, 0, time.UTC)}
	cfg, err := o.config()
	if err != nil || !cfg.Start.Equal(time.Date(2030, 1, 12, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("start %v, %v; want 2030-01-12", cfg.Start, err)
	}
}

// TestWrite: the same options write the same NDJSON, one line per event,
// and native writes GitHub deliveries.
func TestWrite(t *testing.T) {
	o := Options{Config: simulate.Config{Seed: 3, Events: 200, Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}, ShapeWindow: 100}
	var a, b bytes.Buffer
	sa, err := Write(context.Background(), &a, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(context.Background(), &b, o); err != nil || a.String() != b.String() {
		t.Fatalf("two writes differ (%v)", err)
	}
	if n := strings.Count(a.String(), "\n"); n != 200 || sa.Generated != 200 || sa.Shape.Events != 200 || sa.Order != simulate.OrderTime || sa.Rate != simulate.DefaultRate {
		t.Fatalf("%d lines, summary %+v", n, sa)
	}
	o.Native = true
	var nat bytes.Buffer
	if _, err := Write(context.Background(), &nat, o); err != nil || !strings.Contains(nat.String(), `"X-GitHub-Event"`) {
		t.Fatalf("native: %v", err)
	}
}
