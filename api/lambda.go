package api

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/functionurl"
)

// LambdaHandler serves h behind a Lambda function URL (payload format 2.0,
// BUFFERED invoke mode) through package internal/functionurl, which
// documents the request and response mapping. The invocation never fails:
// an event that is not a valid request answers 400 with the API's error
// body, code invalid_parameter.
func LambdaHandler(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		return functionurl.Serve(ctx, h, ev, writeBadEvent), nil
	}
}

// writeBadEvent is LambdaHandler's functionurl.BadRequestFunc.
func writeBadEvent(w http.ResponseWriter, err error) {
	writeError(w, http.StatusBadRequest, ErrorDetail{Code: CodeInvalidParameter, Message: err.Error()})
}
