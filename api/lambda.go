package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// LambdaHandler serves h behind a Lambda function URL (payload format 2.0,
// BUFFERED invoke mode): each event becomes an *http.Request, h writes into
// an httptest.ResponseRecorder, and the recording becomes the response.
// Text bodies (JSON, HTML, CSS, JavaScript, SVG, plain text) are returned as
// text, anything else base64-encoded.
func LambdaHandler(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		req, err := RequestFromLambda(ctx, ev)
		if err != nil {
			// A request the function URL should never send: answer 400
			// rather than fail the invocation.
			rec := httptest.NewRecorder()
			writeError(rec, http.StatusBadRequest, ErrorDetail{Code: CodeInvalidParameter, Message: err.Error()})
			return ResponseToLambda(rec), nil
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return ResponseToLambda(rec), nil
	}
}

// RequestFromLambda converts a function URL event to an *http.Request.
func RequestFromLambda(ctx context.Context, ev events.LambdaFunctionURLRequest) (*http.Request, error) {
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		return nil, fmt.Errorf("api: lambda event: requestContext.http.method is empty")
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if path == "" {
		path = "/"
	}
	target := path
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, fmt.Errorf("api: lambda event: bad path %q: %w", target, err)
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return nil, fmt.Errorf("api: lambda event: body is not base64: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("api: lambda event: %w", err)
	}
	req.RequestURI = target
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	req.Host = ev.RequestContext.DomainName
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	req.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	req.ContentLength = int64(len(body))
	return req, nil
}

// ResponseToLambda converts a recorded response to a function URL response.
// Repeated headers are joined with ", " (Set-Cookie goes to Cookies).
func ResponseToLambda(rec *httptest.ResponseRecorder) events.LambdaFunctionURLResponse {
	res := rec.Result()
	out := events.LambdaFunctionURLResponse{StatusCode: res.StatusCode, Headers: map[string]string{}}
	for k, vs := range res.Header {
		if k == "Set-Cookie" {
			out.Cookies = append(out.Cookies, vs...)
			continue
		}
		out.Headers[k] = strings.Join(vs, ", ")
	}
	body := rec.Body.Bytes()
	if isText(res.Header.Get("Content-Type")) && utf8.Valid(body) {
		out.Body = string(body)
	} else if len(body) > 0 {
		out.Body = base64.StdEncoding.EncodeToString(body)
		out.IsBase64Encoded = true
	}
	return out
}

func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	switch mt {
	case "application/json", "application/javascript", "application/xml", "image/svg+xml":
		return true
	}
	return false
}
