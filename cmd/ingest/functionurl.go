package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// requestFromFunctionURL converts a function URL request (payload format
// 2.0) into the *http.Request an http.Handler serves. Headers arrive with
// lower-case names (http.Header canonicalises them); a base64-encoded body
// is decoded; Content-Length is the decoded body's length.
func requestFromFunctionURL(ctx context.Context, ev events.LambdaFunctionURLRequest) (*http.Request, error) {
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(ev.Body)
		if err != nil {
			return nil, fmt.Errorf("ingest: function URL request: body: bad base64: %w", err)
		}
		body = b
	}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		return nil, fmt.Errorf("ingest: function URL request: requestContext.http.method: is required")
	}
	path := ev.RawPath
	if path == "" {
		path = "/"
	}
	u := &url.URL{Scheme: "https", Host: ev.RequestContext.DomainName, Path: path, RawQuery: ev.RawQueryString}
	if ev.RequestContext.DomainName == "" {
		u.Host = "lambda-url.invalid"
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("ingest: function URL request: %w", err)
	}
	for k, v := range ev.Headers {
		r.Header.Set(k, v)
	}
	for _, c := range ev.Cookies {
		r.Header.Add("Cookie", c)
	}
	r.ContentLength = int64(len(body))
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	r.RequestURI = u.RequestURI()
	return r, nil
}

// bufferedResponse is the http.ResponseWriter behind serveFunctionURL.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// serveFunctionURL serves one function URL request with h and returns the
// buffered response. Repeated header values are joined with ", " (a
// function URL response has one value per header), Set-Cookie headers
// become Cookies, and a body that is not valid UTF-8 is base64-encoded.
func serveFunctionURL(ctx context.Context, h http.Handler, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	r, err := requestFromFunctionURL(ctx, ev)
	if err != nil {
		// A malformed request is the client's problem: answer 400 rather
		// than fail the invocation.
		return events.LambdaFunctionURLResponse{
			StatusCode: http.StatusBadRequest,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       fmt.Sprintf("{%q:%q}\n", "error", err.Error()),
		}, nil
	}
	w := &bufferedResponse{header: http.Header{}}
	h.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	resp := events.LambdaFunctionURLResponse{StatusCode: w.status, Headers: map[string]string{}}
	keys := make([]string, 0, len(w.header))
	for k := range w.header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "Set-Cookie" {
			resp.Cookies = append(resp.Cookies, w.header[k]...)
			continue
		}
		resp.Headers[k] = strings.Join(w.header[k], ", ")
	}
	if b := w.body.Bytes(); isText(b) {
		resp.Body = string(b)
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(b)
		resp.IsBase64Encoded = true
	}
	return resp, nil
}

func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }
