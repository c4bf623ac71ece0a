package functionurl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// ErrMalformedRequest is wrapped by every error [Request] returns: the event
// is not a request the function URL could have sent. The message names the
// field at fault.
var ErrMalformedRequest = errors.New("functionurl: malformed request event")

// BadRequestFunc writes the answer to an event that [Request] rejects; err
// wraps [ErrMalformedRequest]. The status it writes is the response's status
// (400 is expected).
type BadRequestFunc func(w http.ResponseWriter, err error)

// DefaultBadRequest is the BadRequestFunc used when [Serve] is given nil: a
// 400 with the error message as plain text (http.Error).
func DefaultBadRequest(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// Request converts a function URL event into the *http.Request that
// net/http's server would pass to a handler (see the package documentation
// for the mapping). The request carries ctx.
func Request(ctx context.Context, ev events.LambdaFunctionURLRequest) (*http.Request, error) {
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		return nil, fmt.Errorf("%w: requestContext.http.method: is required", ErrMalformedRequest)
	}
	path := ev.RawPath
	path = cmp.Or(path, ev.RequestContext.HTTP.Path)
	path = cmp.Or(path, "/")
	target := path
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, fmt.Errorf("%w: rawPath and rawQueryString: %q is not a request target: %w", ErrMalformedRequest, target, err)
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return nil, fmt.Errorf("%w: body: not base64: %w", ErrMalformedRequest, err)
		}
	}
	// The URL is set below: NewRequest would parse target as a URL
	// reference ("//x" as a host), not as a request target.
	r, err := http.NewRequestWithContext(ctx, method, "/", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: requestContext.http.method: %w", ErrMalformedRequest, err)
	}
	r.URL = u
	r.RequestURI = target
	for k, v := range ev.Headers {
		r.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	r.Host = ev.RequestContext.DomainName
	if h := r.Header.Get("Host"); h != "" {
		r.Host = h
	}
	r.Header.Del("Host")
	r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	r.ContentLength = int64(len(body))
	return r, nil
}

// Serve serves one function URL event with h and returns the buffered
// response. It never fails: an event that [Request] rejects is answered by
// badRequest (DefaultBadRequest when nil) without calling h.
func Serve(ctx context.Context, h http.Handler, ev events.LambdaFunctionURLRequest, badRequest BadRequestFunc) events.LambdaFunctionURLResponse {
	w := &buffer{header: http.Header{}}
	r, err := Request(ctx, ev)
	if err != nil {
		if badRequest == nil {
			badRequest = DefaultBadRequest
		}
		badRequest(w, err)
	} else {
		h.ServeHTTP(w, r)
	}
	return w.response()
}

// buffer is the http.ResponseWriter behind Serve. It records what net/http's
// server would send: the status and a snapshot of the headers taken when the
// status is fixed, then the body.
type buffer struct {
	header http.Header // the handler's, mutable
	status int         // 0 until fixed
	sent   http.Header // snapshot of header when status was fixed
	body   bytes.Buffer
}

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if b.status != 0 {
		return
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		return // an interim response; a buffered response cannot carry it
	}
	b.status = code
	b.sent = b.header.Clone()
}

func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(b.status) {
		return 0, http.ErrBodyNotAllowed
	}
	return b.body.Write(p)
}

// response converts the recording to a function URL response.
func (b *buffer) response() events.LambdaFunctionURLResponse {
	if b.status == 0 {
		b.WriteHeader(http.StatusOK)
	}
	body := b.body.Bytes()
	out := events.LambdaFunctionURLResponse{StatusCode: b.status, Headers: map[string]string{}}
	for k, vs := range b.sent {
		switch {
		case len(vs) == 0:
		case k == "Set-Cookie":
			out.Cookies = append(out.Cookies, vs...)
		default:
			out.Headers[k] = strings.Join(vs, ", ")
		}
	}
	_, haveType := b.sent["Content-Type"]
	_, haveCE := b.sent["Content-Encoding"]
	_, haveTE := b.sent["Transfer-Encoding"]
	if !haveType && !haveCE && !haveTE && len(body) > 0 {
		out.Headers["Content-Type"] = http.DetectContentType(body)
	}
	switch {
	case len(body) == 0:
	case isText(body):
		out.Body = string(body)
	default:
		out.Body = base64.StdEncoding.EncodeToString(body)
		out.IsBase64Encoded = true
	}
	return out
}

// isText reports whether b survives the invocation response's JSON as a
// string: valid UTF-8 without NUL.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// bodyAllowed is net/http's rule: no body with 1xx, 204 or 304.
func bodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}
