package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/functionurl"
)

// ErrUnrecognizedEvent is returned, wrapped, for an invocation payload that
// is neither a function URL request nor an EventBridge event. It is
// permanent: retrying the same payload cannot help.
var ErrUnrecognizedEvent = errors.New("ingest: unrecognized invocation: neither a function URL request (requestContext.http.method) nor an EventBridge event (source, detail-type)")

// kind is what an invocation payload is.
type kind int

const (
	kindUnknown     kind = iota
	kindFunctionURL      // a GitHub webhook delivery through the function URL
	kindEventBridge      // an EventBridge event (Step Functions status change)
)

func (k kind) String() string {
	switch k {
	case kindFunctionURL:
		return "function_url"
	case kindEventBridge:
		return "eventbridge"
	}
	return "unknown"
}

// classify tells the two invocation shapes apart from the raw JSON: a
// function URL request (payload format 2.0) always carries
// requestContext.http.method; an EventBridge event always carries source and
// detail-type, which a function URL request never has at the top level.
func classify(raw json.RawMessage) kind {
	var probe struct {
		Source         string `json:"source"`
		DetailType     string `json:"detail-type"`
		RequestContext *struct {
			HTTP *struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return kindUnknown
	}
	switch {
	case probe.RequestContext != nil && probe.RequestContext.HTTP != nil && probe.RequestContext.HTTP.Method != "":
		return kindFunctionURL
	case probe.Source != "" && probe.DetailType != "":
		return kindEventBridge
	}
	return kindUnknown
}

// stepFunctionsHandler is what the dispatcher needs from an
// *ingest.StepFunctionsAdapter.
type stepFunctionsHandler interface {
	Handle(ctx context.Context, ev ingest.EventBridgeEvent) (ingest.AdapterOutcome, error)
}

// dispatcher is the Lambda handler: one function serves both producers.
//
//   - A function URL request is served by webhook (ingest.WebhookHandler
//     behind the secret loader) through package internal/functionurl; the
//     HTTP status is the answer, and the invocation itself never fails, so a
//     bad delivery is never retried by Lambda. An event that is not a valid
//     request answers 400 {"error":...}, the webhook's error shape.
//   - An EventBridge event goes to the Step Functions adapter. Its error is
//     returned so that Lambda's asynchronous retries and the on-failure
//     destination see it (the append is idempotent, so a retry is harmless).
//
// It is safe for concurrent use if its parts are.
type dispatcher struct {
	webhook http.Handler
	sfn     stepFunctionsHandler
}

// stepFunctionsResult is the invocation result for an EventBridge event.
type stepFunctionsResult struct {
	Outcome ingest.AdapterOutcome `json:"outcome"`
}

// Handle is the Lambda entry point.
func (d *dispatcher) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	switch classify(raw) {
	case kindFunctionURL:
		var req events.LambdaFunctionURLRequest
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("ingest: function URL request: %w", err)
		}
		return functionurl.Serve(ctx, d.webhook, req, writeBadEvent), nil
	case kindEventBridge:
		var ev ingest.EventBridgeEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("ingest: EventBridge event: %w", err)
		}
		out, err := d.sfn.Handle(ctx, ev)
		if err != nil {
			return nil, err
		}
		return stepFunctionsResult{Outcome: out}, nil
	}
	return nil, fmt.Errorf("%w (%d bytes)", ErrUnrecognizedEvent, len(raw))
}

// writeBadEvent answers a function URL event that is not a valid request
// (functionurl.BadRequestFunc) in the webhook's error shape.
func writeBadEvent(w http.ResponseWriter, err error) {
	writeError(w, http.StatusBadRequest, err.Error())
}

// writeError answers status with the webhook's error shape, {"error":msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
