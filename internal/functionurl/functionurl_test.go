package functionurl_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/functionurl"
)

// event is a function URL event as Lambda sends it.
var event = functionurl.Event

// request is what a test compares of an *http.Request.
type request struct {
	Method, URL, EscapedPath, RequestURI, Host, RemoteAddr string
	Header                                                 http.Header
	Body                                                   string
	ContentLength                                          int64
}

func TestRequest(t *testing.T) {
	const domain = "abc123.lambda-url.us-east-1.on.aws"
	tests := []struct {
		name string
		ev   func() events.LambdaFunctionURLRequest
		want request
	}{
		{
			name: "escaped path, query, headers, cookies, base64 body",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("POST", "/a%2Fb/c", "x=1&y=%20z", map[string]string{"content-type": "text/plain", "x-custom": "v", "x-github-event": "workflow_job"})
				ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte("hello\x00\xff")), true
				ev.Cookies = []string{"a=1", "b=2"}
				return ev
			},
			want: request{
				Method: "POST", URL: "/a%2Fb/c?x=1&y=%20z", EscapedPath: "/a%2Fb/c", RequestURI: "/a%2Fb/c?x=1&y=%20z",
				Host: domain, RemoteAddr: "203.0.113.7",
				Header: http.Header{"Content-Type": {"text/plain"}, "X-Custom": {"v"}, "X-Github-Event": {"workflow_job"}, "Cookie": {"a=1; b=2"}},
				Body:   "hello\x00\xff", ContentLength: 7,
			},
		},
		{
			name: "plain body",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("POST", "/hooks/github", "", map[string]string{"content-type": "application/json"})
				ev.Body = `{"zen":"x"}`
				return ev
			},
			want: request{
				Method: "POST", URL: "/hooks/github", EscapedPath: "/hooks/github", RequestURI: "/hooks/github",
				Host: domain, RemoteAddr: "203.0.113.7",
				Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"zen":"x"}`, ContentLength: 11,
			},
		},
		{
			name: "host header wins over the domain name and leaves the headers",
			ev: func() events.LambdaFunctionURLRequest {
				return event("GET", "/", "", map[string]string{"host": "api.example.com", "accept": "*/*"})
			},
			want: request{
				Method: "GET", URL: "/", EscapedPath: "/", RequestURI: "/", Host: "api.example.com", RemoteAddr: "203.0.113.7",
				Header: http.Header{"Accept": {"*/*"}},
			},
		},
		{
			name: "cookies array replaces a cookie header",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("GET", "/", "", map[string]string{"cookie": "stale=1"})
				ev.Cookies = []string{"s=1"}
				return ev
			},
			want: request{
				Method: "GET", URL: "/", EscapedPath: "/", RequestURI: "/", Host: domain, RemoteAddr: "203.0.113.7",
				Header: http.Header{"Cookie": {"s=1"}},
			},
		},
		{
			name: "no rawPath: requestContext.http.path",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("GET", "/api/health", "verbose=1", nil)
				ev.RawPath = ""
				return ev
			},
			want: request{
				Method: "GET", URL: "/api/health?verbose=1", EscapedPath: "/api/health", RequestURI: "/api/health?verbose=1",
				Host: domain, RemoteAddr: "203.0.113.7", Header: http.Header{},
			},
		},
		{
			name: "no path at all: root; no domain name: no host",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("DELETE", "", "", nil)
				ev.RequestContext.DomainName, ev.RequestContext.HTTP.SourceIP = "", ""
				return ev
			},
			want: request{Method: "DELETE", URL: "/", EscapedPath: "/", RequestURI: "/", Header: http.Header{}},
		},
		{
			name: "double slash is a path, not a host",
			ev:   func() events.LambdaFunctionURLRequest { return event("GET", "//evil.example/x", "", nil) },
			want: request{
				Method: "GET", URL: "//evil.example/x", EscapedPath: "//evil.example/x", RequestURI: "//evil.example/x",
				Host: domain, RemoteAddr: "203.0.113.7", Header: http.Header{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type key struct{}
			ctx := context.WithValue(context.Background(), key{}, "v")
			r, err := functionurl.Request(ctx, tt.ev())
			if err != nil {
				t.Fatalf("Request: %v", err)
			}
			body, err := io.ReadAll(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			got := request{
				Method: r.Method, URL: r.URL.String(), EscapedPath: r.URL.EscapedPath(), RequestURI: r.RequestURI,
				Host: r.Host, RemoteAddr: r.RemoteAddr, Header: r.Header, Body: string(body), ContentLength: r.ContentLength,
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("request\n got  %+v\n want %+v", got, tt.want)
			}
			if r.Context().Value(key{}) != "v" {
				t.Error("the request does not carry the context")
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		ev   func() events.LambdaFunctionURLRequest
		want string
	}{
		{
			name: "no method",
			ev:   func() events.LambdaFunctionURLRequest { return event("", "/", "", nil) },
			want: "functionurl: malformed request event: requestContext.http.method: is required",
		},
		{
			name: "method is not a token",
			ev:   func() events.LambdaFunctionURLRequest { return event("G T", "/", "", nil) },
			want: `functionurl: malformed request event: requestContext.http.method: net/http: invalid method "G T"`,
		},
		{
			name: "body is not base64",
			ev: func() events.LambdaFunctionURLRequest {
				ev := event("POST", "/", "", nil)
				ev.Body, ev.IsBase64Encoded = "%%%", true
				return ev
			},
			want: "functionurl: malformed request event: body: not base64: illegal base64 data at input byte 0",
		},
		{
			name: "bad escape in the path",
			ev:   func() events.LambdaFunctionURLRequest { return event("GET", "/a%zz", "", nil) },
			want: `functionurl: malformed request event: rawPath and rawQueryString: "/a%zz" is not a request target: parse "/a%zz": invalid URL escape "%zz"`,
		},
		{
			name: "relative path",
			ev:   func() events.LambdaFunctionURLRequest { return event("GET", "hooks", "", nil) },
			want: `functionurl: malformed request event: rawPath and rawQueryString: "hooks" is not a request target: parse "hooks": invalid URI for request`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := functionurl.Request(context.Background(), tt.ev())
			if err == nil {
				t.Fatalf("Request = %s %s, want error %q", r.Method, r.URL, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got  %q\n want %q", err, tt.want)
			}
			if !errors.Is(err, functionurl.ErrMalformedRequest) {
				t.Errorf("error %v does not wrap ErrMalformedRequest", err)
			}
		})
	}
}

func TestServe(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
		want events.LambdaFunctionURLResponse
	}{
		{
			name: "repeated headers joined, cookies, status, text body",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/css")
				w.Header().Add("Vary", "Accept")
				w.Header().Add("Vary", "Origin")
				http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
				w.Header().Add("Set-Cookie", "b=2")
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, "body{}")
			},
			want: events.LambdaFunctionURLResponse{
				StatusCode: 418, Headers: map[string]string{"Content-Type": "text/css", "Vary": "Accept, Origin"},
				Cookies: []string{"a=1", "b=2"}, Body: "body{}",
			},
		},
		{
			name: "binary body with NUL is base64",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write([]byte{0x89, 'P', 'N', 'G', 0})
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "image/png"}, Body: "iVBORwA=", IsBase64Encoded: true},
		},
		{
			name: "valid UTF-8 under a binary content type is text",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				_, _ = io.WriteString(w, "plain")
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/octet-stream"}, Body: "plain"},
		},
		{
			name: "invalid UTF-8 under a text content type is base64",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = w.Write([]byte("caf\xe9"))
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8"}, Body: "Y2Fm6Q==", IsBase64Encoded: true},
		},
		{
			name: "implicit 200 and sniffed content type",
			h: func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "<!DOCTYPE html><p>")
				_, _ = io.WriteString(w, "hi")
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "text/html; charset=utf-8"}, Body: "<!DOCTYPE html><p>hi"},
		},
		{
			name: "sniffing suppressed by an empty Content-Type",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = nil
				_, _ = w.Write([]byte{0xff, 0xfe})
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{}, Body: "//4=", IsBase64Encoded: true},
		},
		{
			name: "nothing written",
			h:    func(w http.ResponseWriter, r *http.Request) {},
			want: events.LambdaFunctionURLResponse{StatusCode: 200, Headers: map[string]string{}},
		},
		{
			name: "headers changed after WriteHeader and a second status are ignored",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Early", "1")
				w.WriteHeader(http.StatusAccepted)
				w.Header().Set("X-Late", "1")
				w.Header().Add("Set-Cookie", "late=1")
				w.WriteHeader(http.StatusInternalServerError)
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 202, Headers: map[string]string{"X-Early": "1"}},
		},
		{
			name: "interim 1xx is dropped",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</style.css>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, "{}")
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 201, Headers: map[string]string{"Link": "</style.css>; rel=preload", "Content-Type": "application/json"}, Body: "{}"},
		},
		{
			name: "no body with 204",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNoContent)
				_, _ = io.WriteString(w, "x")
			},
			want: events.LambdaFunctionURLResponse{StatusCode: 204, Headers: map[string]string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := functionurl.Serve(context.Background(), tt.h, event("GET", "/", "", nil), nil)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("response\n got  %+v\n want %+v", got, tt.want)
			}
		})
	}
}

func TestServeBadRequest(t *testing.T) {
	bad := event("GET", "/", "", nil)
	bad.Body, bad.IsBase64Encoded = "%%%", true
	const msg = "functionurl: malformed request event: body: not base64: illegal base64 data at input byte 0"
	tests := []struct {
		name       string
		badRequest functionurl.BadRequestFunc
		want       events.LambdaFunctionURLResponse
	}{
		{
			name: "default: plain text",
			want: events.LambdaFunctionURLResponse{
				StatusCode: 400,
				Headers:    map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"},
				Body:       msg + "\n",
			},
		},
		{
			name: "caller's error shape",
			badRequest: func(w http.ResponseWriter, err error) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			},
			want: events.LambdaFunctionURLResponse{
				StatusCode: 400, Headers: map[string]string{"Content-Type": "application/json"},
				Body: `{"error":"` + msg + `"}` + "\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
			got := functionurl.Serve(context.Background(), h, bad, tt.badRequest)
			if called {
				t.Error("the handler served a malformed event")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("response\n got  %+v\n want %+v", got, tt.want)
			}
		})
	}
}

func TestServeWriteErrors(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{http.StatusOK, nil},
		{http.StatusNoContent, http.ErrBodyNotAllowed},
		{http.StatusNotModified, http.ErrBodyNotAllowed},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			var err error
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, err = io.WriteString(w, "x")
			})
			functionurl.Serve(context.Background(), h, event("GET", "/", "", nil), nil)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Write after %d: err = %v, want %v", tt.status, err, tt.want)
			}
		})
	}
}

// TestServeRequestRoundTrip: the handler sees the event's request.
func TestServeRequestRoundTrip(t *testing.T) {
	ev := event("PUT", "/items/7", "v=2", map[string]string{"content-type": "application/json"})
	ev.Body = `{"n":7}`
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL, r.Header.Get("Content-Type"), b)
	})
	got := functionurl.Serve(context.Background(), h, ev, nil)
	if want := `PUT /items/7?v=2 application/json {"n":7}`; got.Body != want || got.StatusCode != 200 {
		t.Fatalf("response %d %q, want 200 %q", got.StatusCode, got.Body, want)
	}
}

// FuzzServeBody: whatever bytes the handler writes, the client gets them
// back after the invocation response's JSON and the function URL's base64
// decoding.
func FuzzServeBody(f *testing.F) {
	for _, s := range []string{"", "plain", "caf\xe9", "nul\x00byte", "\x89PNG\r\n\x1a\n", "\u2028 and \ufffd", `{"a":"<b>&"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(body)
		})
		raw, err := json.Marshal(functionurl.Serve(context.Background(), h, event("GET", "/", "", nil), nil))
		if err != nil {
			t.Fatal(err)
		}
		var res events.LambdaFunctionURLResponse
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		got := []byte(res.Body)
		if res.IsBase64Encoded {
			if got, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, body) {
			t.Fatalf("client gets %q, handler wrote %q (base64 %v)", got, body, res.IsBase64Encoded)
		}
	})
}

func ExampleServe() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("Set-Cookie", "seen=1")
		fmt.Fprintf(w, "hello from %s", r.URL.Path)
	})
	ev := events.LambdaFunctionURLRequest{
		RawPath: "/greet",
		RequestContext: events.LambdaFunctionURLRequestContext{
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: "GET"},
		},
	}
	res := functionurl.Serve(context.Background(), h, ev, nil)
	fmt.Println(res.StatusCode, res.Headers, res.Cookies, res.Body, res.IsBase64Encoded)
	// Output: 200 map[Content-Type:text/plain] [seen=1] hello from /greet false
}
