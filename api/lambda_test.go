package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func urlEvent(method, rawPath, rawQuery string, headers map[string]string) events.LambdaFunctionURLRequest {
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: rawPath, RawQueryString: rawQuery, Headers: headers,
		RequestContext: events.LambdaFunctionURLRequestContext{
			DomainName: "abc123.lambda-url.us-east-1.on.aws",
			HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: rawPath, SourceIP: "203.0.113.7"},
		},
	}
}

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

func TestLambdaRequestConversion(t *testing.T) {
	ev := urlEvent("POST", "/a%2Fb/c", "x=1&y=%20z", map[string]string{"content-type": "text/plain", "x-custom": "v"})
	ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte("hello\x00")), true
	ev.Cookies = []string{"a=1", "b=2"}
	req, err := RequestFromLambda(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	switch {
	case req.Method != "POST", req.URL.EscapedPath() != "/a%2Fb/c", req.URL.Query().Get("y") != " z",
		req.Header.Get("X-Custom") != "v", req.Header.Get("Cookie") != "a=1; b=2", string(body) != "hello\x00",
		req.Host != "abc123.lambda-url.us-east-1.on.aws", req.RemoteAddr != "203.0.113.7", req.ContentLength != 6:
		t.Fatalf("request %s %s %v host %s remote %s body %q", req.Method, req.URL, req.Header, req.Host, req.RemoteAddr, body)
	}
	if _, err := RequestFromLambda(context.Background(), urlEvent("", "/", "", nil)); err == nil {
		t.Fatal("an event without a method converted")
	}
	bad := urlEvent("GET", "/", "", nil)
	bad.Body, bad.IsBase64Encoded = "%%%", true
	if _, err := RequestFromLambda(context.Background(), bad); err == nil {
		t.Fatal("a body that is not base64 converted")
	}
}

func TestLambdaResponseConversion(t *testing.T) {
	h := LambdaHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "s", Value: "1"})
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		switch r.URL.Path {
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0})
		default:
			w.Header().Set("Content-Type", "text/css")
			w.WriteHeader(201)
			io.WriteString(w, "body{}")
		}
	}))
	res, _ := h(context.Background(), urlEvent("GET", "/png", "", nil))
	raw, _ := base64.StdEncoding.DecodeString(res.Body)
	if !res.IsBase64Encoded || string(raw) != "\x89PNG\x00" || res.Headers["X-Multi"] != "a, b" || len(res.Cookies) != 1 || res.Cookies[0] != "s=1" {
		t.Fatalf("binary response %+v", res)
	}
	res, _ = h(context.Background(), urlEvent("GET", "/style.css", "", nil))
	if res.IsBase64Encoded || res.Body != "body{}" || res.StatusCode != 201 {
		t.Fatalf("text response %+v", res)
	}
	// A malformed event answers 400 instead of failing the invocation.
	res, err := h(context.Background(), urlEvent("", "/", "", nil))
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("malformed event: %+v %v", res, err)
	}
}
