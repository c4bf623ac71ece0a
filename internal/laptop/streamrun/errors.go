package streamrun

import (
	"context"
	"errors"
	"net"

	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"
)

func isExpired(err error) bool {
	var e *stypes.ExpiredIteratorException
	return errors.As(err, &e) || apiCode(err) == "ExpiredIteratorException"
}

func isTrimmed(err error) bool {
	var e *stypes.TrimmedDataAccessException
	return errors.As(err, &e) || apiCode(err) == "TrimmedDataAccessException"
}

func isNotFound(err error) bool {
	var e *stypes.ResourceNotFoundException
	return errors.As(err, &e) || apiCode(err) == "ResourceNotFoundException"
}

func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// transientCodes are error codes worth another attempt after a pause.
var transientCodes = map[string]bool{
	"LimitExceededException":                 true, // too many readers of a shard
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"InternalServerError":                    true,
	"InternalFailure":                        true,
	"ServiceUnavailable":                     true,
	"TransactionConflictException":           true,
}

// transient reports whether err is throttling, a server-side failure (5xx)
// or a network error: worth retrying after a backoff.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if transientCodes[apiCode(err)] {
		return true
	}
	var re interface{ RetryableError() bool }
	if errors.As(err, &re) && re.RetryableError() {
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && (status.HTTPStatusCode() >= 500 || status.HTTPStatusCode() == 429) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}
