package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/functionurl"
)

var urlEvent = functionurl.Event

func TestLambdaAdapterServesTheAPI(t *testing.T) {
	h := LambdaHandler(newHandler(t, &fakeDB{}, nil))
	ev := urlEvent("GET", "/api/executions/"+url.PathEscape(knownARN), "", map[string]string{"authorization": bearer})
	res, err := h(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.IsBase64Encoded || res.Headers["Content-Type"] != "application/json; charset=utf-8" {
		t.Fatalf("response %+v", res)
	}
	var item map[string]any
	if err := json.Unmarshal([]byte(res.Body), &item); err != nil || item["executionArn"] != knownARN {
		t.Fatalf("body %q: %v", res.Body, err)
	}
	// Query string and missing token.
	res, _ = h(context.Background(), urlEvent("GET", "/api/messages", "stage=dev&limit=500", map[string]string{"authorization": bearer}))
	if res.StatusCode != 400 {
		t.Fatalf("limit over the function URL: %d %s", res.StatusCode, res.Body)
	}
	res, _ = h(context.Background(), urlEvent("GET", "/api/messages", "stage=dev", nil))
	if res.StatusCode != 401 || res.Headers["Www-Authenticate"] == "" {
		t.Fatalf("no token over the function URL: %d %v", res.StatusCode, res.Headers)
	}
}

// TestLambdaHandlerBadEvent: an event that is not a valid request answers
// 400 with the API's error body instead of failing the invocation, and never
// reaches the API.
func TestLambdaHandlerBadEvent(t *testing.T) {
	noBase64 := urlEvent("GET", "/api/health", "", nil)
	noBase64.Body, noBase64.IsBase64Encoded = "%%%", true
	tests := []struct {
		name string
		ev   events.LambdaFunctionURLRequest
		want string // error message
	}{
		{"no method", urlEvent("", "/api/health", "", nil),
			"functionurl: malformed request event: requestContext.http.method: is required"},
		{"body not base64", noBase64,
			"functionurl: malformed request event: body: not base64: illegal base64 data at input byte 0"},
		{"bad path", urlEvent("GET", "/api/%zz", "", nil),
			`functionurl: malformed request event: rawPath and rawQueryString: "/api/%zz" is not a request target: parse "/api/%zz": invalid URL escape "%zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			served := false
			h := LambdaHandler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }))
			res, err := h(context.Background(), tt.ev)
			if err != nil {
				t.Fatalf("invocation error %v; a malformed event must answer 400", err)
			}
			if served {
				t.Error("the API served a malformed event")
			}
			if res.StatusCode != http.StatusBadRequest || res.IsBase64Encoded || res.Headers["Content-Type"] != "application/json; charset=utf-8" {
				t.Fatalf("response %+v, want a 400 JSON error", res)
			}
			var body ErrorBody
			if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
				t.Fatalf("body %q: %v", res.Body, err)
			}
			if want := (ErrorDetail{Code: CodeInvalidParameter, Message: tt.want}); body.Error != want {
				t.Fatalf("error %+v, want %+v", body.Error, want)
			}
		})
	}
}
