package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/streamfold/streamfold/internal/emf"
	"github.com/streamfold/streamfold/internal/opsrec"
)

// Request is the invocation's payload: EventBridge Scheduler's input
// (terraform/reconcile.tf), or an on-demand `aws lambda invoke`. Every
// field is optional; {} checks the default window without healing.
//
//	{"since": "72h"}                                          the last 72 hours
//	{"from": "2026-03-01T00:00:00Z", "to": "2026-03-02T00:00:00Z"}  a fixed window
//	{"heal": true}                                            heal too (RECONCILE_HEAL must be true)
type Request struct {
	// Since is the window's length back from To (or now), a Go duration
	// ("26h"). Default: RECONCILE_WINDOW.
	Since string `json:"since,omitempty"`
	// From and To (RFC 3339) bound the window [From, To); From instead of
	// Since. Without To the window ends now, less package reconcile's
	// settle time (the consumers' last minutes are left to them).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Heal feeds the missing events through the consumers' paths. Default:
	// RECONCILE_HEAL. A pointer, so that false overrides a true default.
	Heal *bool `json:"heal,omitempty"`
}

// Response is what an invocation returns: the run's result (also stored
// in the checkpoints table for the operations page) and its gap count.
// Gaps are a result, not a failure: the function fails only when the run
// does, and the gaps go to the ReconcileGaps metric and its alarm.
type Response struct {
	opsrec.Result
	Gaps int `json:"gaps"`
}

// window is what one run checks: events recorded in [From, To). A zero
// To is package reconcile's default (now less its settle time, so that
// the consumers' last minutes are left to them).
type window struct {
	From, To time.Time
	Heal     bool
}

// runFunc is one reconcile run: package reconcile's Reconcile bound to
// the deployment (reconcile.go); a fake in the tests.
type runFunc func(ctx context.Context, w window) (opsrec.Result, error)

// ErrRequest is a payload the function refuses (the run never starts).
var ErrRequest = errors.New("reconcile: bad request")

// handler turns requests into runs, metrics and log lines.
type handler struct {
	run        runFunc
	settings   settings
	metrics    io.Writer
	log        *slog.Logger
	now        func() time.Time
	deployment string
}

// window resolves a request against the defaults.
func (h *handler) window(req Request) (window, error) {
	now := h.now().UTC()
	w := window{Heal: h.settings.heal}
	if req.Heal != nil {
		w.Heal = *req.Heal
	}
	if w.Heal && !h.settings.heal {
		return w, fmt.Errorf("%w: heal is disabled in this deployment (RECONCILE_HEAL=false: the role may not write the projections or the archive); set the Terraform variable reconcile_heal = true, or heal from the CLI (streamfold reconcile --heal)", ErrRequest)
	}
	if req.To != "" {
		t, err := time.Parse(time.RFC3339, req.To)
		if err != nil {
			return w, fmt.Errorf("%w: to %q: want RFC 3339: %v", ErrRequest, req.To, err)
		}
		w.To = t.UTC()
	}
	switch {
	case req.From != "" && req.Since != "":
		return w, fmt.Errorf("%w: since and from are exclusive", ErrRequest)
	case req.From != "":
		t, err := time.Parse(time.RFC3339, req.From)
		if err != nil {
			return w, fmt.Errorf("%w: from %q: want RFC 3339: %v", ErrRequest, req.From, err)
		}
		w.From = t.UTC()
	default:
		d := h.settings.window
		if req.Since != "" {
			var err error
			if d, err = time.ParseDuration(req.Since); err != nil || d <= 0 {
				return w, fmt.Errorf("%w: since %q: want a positive duration such as 26h", ErrRequest, req.Since)
			}
		}
		w.From = end(w, now).Add(-d)
	}
	if !w.From.Before(end(w, now)) {
		return w, fmt.Errorf("%w: from %s is not before to %s", ErrRequest, w.From.Format(time.RFC3339), end(w, now).Format(time.RFC3339))
	}
	return w, nil
}

// end is where the window ends for its validation: To, or now.
func end(w window, now time.Time) time.Time {
	if w.To.IsZero() {
		return now
	}
	return w.To
}

// Handle runs one reconcile. The payload is decoded strictly: a misspelt
// field is refused instead of silently checking the default window.
func (h *handler) Handle(ctx context.Context, payload json.RawMessage) (Response, error) {
	var req Request
	if p := bytes.TrimSpace(payload); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(p))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return Response{}, fmt.Errorf("%w: payload %s: %v", ErrRequest, p, err)
		}
	}
	w, err := h.window(req)
	if err != nil {
		h.log.Error("reconcile refused", "err", err)
		return Response{}, err
	}
	h.log.Info("reconcile started", "from", w.From, "to", w.To, "heal", w.Heal) // to zero: now less the settle time
	start := h.now()
	res, err := h.run(ctx, w)
	elapsed := h.now().Sub(start)
	if err != nil {
		h.log.Error("reconcile failed", "from", w.From, "to", w.To, "heal", w.Heal, "events", res.Events, "err", err)
		return Response{}, fmt.Errorf("reconcile %s..%s: %w", w.From.Format(time.RFC3339), w.To.Format(time.RFC3339), err)
	}
	out := Response{Result: res, Gaps: res.Gaps()}
	for _, row := range res.Rows {
		if row.Gaps() == 0 {
			continue
		}
		h.log.Warn("reconcile gap", "domain", row.Domain, "day", row.Day, "events", row.Events,
			"missing_projection", row.MissingProjection, "missing_archive", row.MissingArchive, "conflicts", row.Conflicts,
			"healed", row.Healed, "ids", row.IDs)
	}
	h.log.Info("reconcile finished", "from", res.From, "to", res.To, "heal", res.Heal, "events", res.Events,
		"gaps", out.Gaps, "healed", healed(res), "read_units", res.ReadUnits, "write_units", res.WriteUnits,
		"s3_requests", res.S3Requests, "duration", elapsed.String())
	if err := writeMetrics(h.metrics, h.deployment, h.now(), res, elapsed); err != nil {
		// The result is stored and returned; a lost metric line is logged.
		h.log.Error("reconcile metrics", "err", err)
	}
	return out, nil
}

func healed(r opsrec.Result) int {
	n := 0
	for _, row := range r.Rows {
		n += row.Healed
	}
	return n
}

// Metrics, in CloudWatch embedded metric format (one line each, namespace
// Namespace, dimension Deployment): what terraform/reconcile.tf alarms on
// and docs/deployment.md describes.
const (
	Namespace = "Streamfold"
	// MetricGaps is the number of missing and conflicting events: once with
	// the Deployment dimension only (the total, which the alarm watches) and
	// once per kind with Deployment and Kind (KindProjection, KindArchive,
	// KindConflict). Healed gaps count: they were gaps.
	MetricGaps = "ReconcileGaps"
	// MetricEvents is the number of events of the table in the window.
	MetricEvents = "ReconcileEvents"
	// MetricHealed is the number of events fed through the consumers' paths.
	MetricHealed = "ReconcileHealed"
	// MetricReadUnits and MetricWriteUnits are the DynamoDB capacity the run
	// consumed, MetricS3Requests its archive requests.
	MetricReadUnits  = "ReconcileReadUnits"
	MetricWriteUnits = "ReconcileWriteUnits"
	MetricS3Requests = "ReconcileS3Requests"
	// MetricDuration is the run's duration in milliseconds.
	MetricDuration = "ReconcileDuration"

	KindProjection = "projection"
	KindArchive    = "archive"
	KindConflict   = "conflict"
)

// writeMetrics writes a finished run's metric lines.
func writeMetrics(w io.Writer, deployment string, at time.Time, r opsrec.Result, elapsed time.Duration) error {
	byKind := map[string]int{}
	for _, row := range r.Rows {
		byKind[KindProjection] += row.MissingProjection
		byKind[KindArchive] += row.MissingArchive
		byKind[KindConflict] += row.Conflicts
	}
	fields := map[string]string{"From": r.From.UTC().Format(time.RFC3339), "To": r.To.UTC().Format(time.RFC3339), "Heal": fmt.Sprint(r.Heal)}
	dep := []emf.Dim{{Name: "Deployment", Value: deployment}}
	data := []emf.Datum{{Metric: MetricGaps, Value: float64(r.Gaps()), Dims: dep}}
	for _, k := range []string{KindProjection, KindArchive, KindConflict} {
		data = append(data, emf.Datum{Metric: MetricGaps, Value: float64(byKind[k]), Dims: []emf.Dim{dep[0], {Name: "Kind", Value: k}}})
	}
	data = append(data,
		emf.Datum{Metric: MetricEvents, Value: float64(r.Events), Dims: dep},
		emf.Datum{Metric: MetricHealed, Value: float64(healed(r)), Dims: dep},
		emf.Datum{Metric: MetricReadUnits, Value: r.ReadUnits, Dims: dep},
		emf.Datum{Metric: MetricWriteUnits, Value: r.WriteUnits, Dims: dep},
		emf.Datum{Metric: MetricS3Requests, Value: float64(r.S3Requests), Dims: dep},
		emf.Datum{Metric: MetricDuration, Unit: "Milliseconds", Value: float64(elapsed.Milliseconds()), Dims: dep},
	)
	var errs []error
	for _, d := range data {
		d.Namespace, d.Time, d.Fields = Namespace, at, fields
		errs = append(errs, emf.Write(w, d))
	}
	return errors.Join(errs...)
}
