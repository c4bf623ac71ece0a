package runtimeapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runtime is a minimal runtime client, what a bootstrap does.
type runtime struct {
	t    *testing.T
	base string
}

func newRuntime(t *testing.T, s *Server) *runtime {
	return &runtime{t: t, base: "http://" + s.Addr() + "/2018-06-01/runtime/"}
}

func (r *runtime) next() (id string, h http.Header, body []byte) {
	r.t.Helper()
	resp, err := http.Get(r.base + "invocation/next")
	if err != nil {
		r.t.Fatalf("next: %v", err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("next: status %d: %s", resp.StatusCode, body)
	}
	return resp.Header.Get(HeaderRequestID), resp.Header, body
}

func (r *runtime) post(path string, body []byte, hdr map[string]string) (int, string) {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.base+path, bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("post %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

type outcome struct {
	res Result
	err error
}

func invokeAsync(s *Server, inv Invocation) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		r, err := s.Invoke(context.Background(), inv)
		ch <- outcome{r, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan outcome) Result {
	t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("Invoke: %v", o.err)
		}
		return o.res
	case <-time.After(10 * time.Second):
		t.Fatal("Invoke did not return")
	}
	return Result{}
}

func TestResponseAndHeaders(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	ch := invokeAsync(s, Invocation{Payload: []byte(`{"a":1}`), Timeout: 5 * time.Second, FunctionARN: "arn:aws:lambda:eu-west-1:1:function:f"})
	before := time.Now()
	id, h, body := rt.next()
	select {
	case <-s.Polled():
	default:
		t.Error("Polled not closed after /next")
	}
	if string(body) != `{"a":1}` {
		t.Errorf("event body %q", body)
	}
	if len(id) != 36 {
		t.Errorf("request id %q", id)
	}
	ms, err := strconv.ParseInt(h.Get(HeaderDeadlineMs), 10, 64)
	if err != nil {
		t.Fatalf("deadline header %q: %v", h.Get(HeaderDeadlineMs), err)
	}
	if d := time.UnixMilli(ms).Sub(before); d < 4*time.Second || d > 6*time.Second {
		t.Errorf("deadline %v after delivery, want about 5s", d)
	}
	if got := h.Get(HeaderFunctionARN); got != "arn:aws:lambda:eu-west-1:1:function:f" {
		t.Errorf("function ARN %q", got)
	}
	if !strings.HasPrefix(h.Get(HeaderTraceID), "Root=1-") {
		t.Errorf("trace id %q", h.Get(HeaderTraceID))
	}
	if code, b := rt.post("invocation/"+id+"/response", []byte(`{"ok":true}`), nil); code != http.StatusAccepted {
		t.Fatalf("response: %d %s", code, b)
	}
	r := wait(t, ch)
	if string(r.Response) != `{"ok":true}` || r.Error != nil || r.TimedOut || r.RequestID != id {
		t.Errorf("result %+v", r)
	}
	// A second result for the same invocation is refused.
	if code, _ := rt.post("invocation/"+id+"/response", []byte(`{}`), nil); code != http.StatusForbidden && code != http.StatusBadRequest {
		t.Errorf("second response: %d, want 403 or 400", code)
	}
}

func TestErrorTypeFromBodyOrHeader(t *testing.T) {
	for _, tc := range []struct {
		name, body, header, wantType, wantMsg string
	}{
		{"body", `{"errorMessage":"boom","errorType":"errorString"}`, "", "errorString", "boom"},
		{"header", `{"errorMessage":"boom"}`, "Runtime.Custom", "Runtime.Custom", "boom"},
		{"neither", `not json`, "", "Unhandled", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			rt := newRuntime(t, s)
			ch := invokeAsync(s, Invocation{Payload: []byte(`{}`), Timeout: 5 * time.Second})
			id, _, _ := rt.next()
			hdr := map[string]string{}
			if tc.header != "" {
				hdr[HeaderErrorType] = tc.header
			}
			if code, b := rt.post("invocation/"+id+"/error", []byte(tc.body), hdr); code != http.StatusAccepted {
				t.Fatalf("error: %d %s", code, b)
			}
			r := wait(t, ch)
			if r.Error == nil || r.Error.Type != tc.wantType || r.Error.Message != tc.wantMsg || r.Response != nil {
				t.Fatalf("result %+v error %+v", r, r.Error)
			}
			if string(r.Error.Body) != tc.body || r.Error.Header != tc.header {
				t.Errorf("body %q header %q", r.Error.Body, r.Error.Header)
			}
		})
	}
}

func TestUnknownRequestID(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	ch := invokeAsync(s, Invocation{Payload: []byte(`{}`), Timeout: 5 * time.Second})
	id, _, _ := rt.next()
	code, body := rt.post("invocation/not-"+id+"/response", []byte(`{}`), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "InvalidRequestID") {
		t.Errorf("unknown id: %d %s", code, body)
	}
	rt.post("invocation/"+id+"/response", []byte(`{}`), nil)
	wait(t, ch)
}

func TestLateResponseIsATimeout(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	// Timeout 0: the deadline has passed when the event arrives.
	ch := invokeAsync(s, Invocation{Payload: []byte(`{}`)})
	id, _, _ := rt.next()
	time.Sleep(5 * time.Millisecond)
	if code, b := rt.post("invocation/"+id+"/response", []byte(`{"late":1}`), nil); code != http.StatusAccepted {
		t.Fatalf("late response: %d %s", code, b)
	}
	r := wait(t, ch)
	if !r.TimedOut || r.Error == nil || r.Error.Type != ErrorTypeTimeout || r.Response != nil || string(r.Late) != `{"late":1}` {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(r.Error.Message, "Task timed out after 0.00 seconds") {
		t.Errorf("message %q", r.Error.Message)
	}
}

func TestNoResultIsATimeout(t *testing.T) {
	s := newServer(t, WithGrace(50*time.Millisecond))
	rt := newRuntime(t, s)
	ch := invokeAsync(s, Invocation{Payload: []byte(`{}`), Timeout: 100 * time.Millisecond})
	rt.next()
	r := wait(t, ch)
	if !r.TimedOut || r.Error == nil || r.Error.Type != ErrorTypeTimeout {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(r.Error.Message, "Task timed out after 0.10 seconds") {
		t.Errorf("message %q", r.Error.Message)
	}
}

func TestInitError(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	code, _ := rt.post("init/error", []byte(`{"errorMessage":"no config","errorType":"Runtime.ConfigError"}`), map[string]string{HeaderErrorType: "Runtime.ConfigError"})
	if code != http.StatusAccepted {
		t.Fatalf("init error: %d", code)
	}
	select {
	case <-s.InitFailed():
	default:
		t.Fatal("InitFailed not closed")
	}
	if e := s.InitError(); e == nil || e.Type != "Runtime.ConfigError" || e.Message != "no config" {
		t.Errorf("init error %+v", e)
	}
	// After the first /next an init error is refused.
	s2 := newServer(t)
	rt2 := newRuntime(t, s2)
	ch := invokeAsync(s2, Invocation{Payload: []byte(`{}`), Timeout: time.Second})
	id, _, _ := rt2.next()
	if code, _ := rt2.post("init/error", []byte(`{}`), nil); code != http.StatusForbidden {
		t.Errorf("init error after next: %d, want 403", code)
	}
	rt2.post("invocation/"+id+"/response", []byte(`{}`), nil)
	wait(t, ch)
}

func TestExitedFailsInFlightAndQueued(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	first := invokeAsync(s, Invocation{Payload: []byte(`{"n":1}`), Timeout: 5 * time.Second})
	rt.next()
	second := invokeAsync(s, Invocation{Payload: []byte(`{"n":2}`), Timeout: 5 * time.Second})
	time.Sleep(20 * time.Millisecond)
	s.Exited(errors.New("exit status 2"))
	for i, ch := range []<-chan outcome{first, second} {
		r := wait(t, ch)
		if r.Error == nil || r.Error.Type != ErrorTypeExit || !strings.Contains(r.Error.Message, "Runtime exited with error: exit status 2") {
			t.Errorf("invocation %d: %+v", i+1, r.Error)
		}
	}
	// After the exit, an invocation fails at once.
	r, err := s.Invoke(context.Background(), Invocation{Payload: []byte(`{}`), Timeout: time.Second})
	if err != nil || r.Error == nil || r.Error.Type != ErrorTypeExit {
		t.Errorf("after exit: %+v %v", r, err)
	}
}

func TestOversizedResponse(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	ch := invokeAsync(s, Invocation{Payload: []byte(`{}`), Timeout: 5 * time.Second})
	id, _, _ := rt.next()
	big := bytes.Repeat([]byte("x"), MaxResponseBytes+1)
	if code, _ := rt.post("invocation/"+id+"/response", big, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d, want 413", code)
	}
	r := wait(t, ch)
	if r.Error == nil || r.Error.Type != ErrorTypeResponseSize {
		t.Errorf("result %+v", r)
	}
}

func TestInvokeValidatesAndStops(t *testing.T) {
	s := newServer(t)
	if _, err := s.Invoke(context.Background(), Invocation{Payload: []byte(`{`)}); err == nil || !strings.Contains(err.Error(), "Payload") {
		t.Errorf("bad payload: %v", err)
	}
	if _, err := s.Invoke(context.Background(), Invocation{Payload: []byte(`{}`), Timeout: -1}); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("negative timeout: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Invoke(ctx, Invocation{Payload: []byte(`{}`), Timeout: time.Second}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("never polled: %v, want the context's error", err)
	}
	_ = s.Close()
	if _, err := s.Invoke(context.Background(), Invocation{Payload: []byte(`{}`)}); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
	if resp, err := http.Get("http://" + s.Addr() + "/2018-06-01/runtime/invocation/next"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after Close")
	}
}

func TestUnknownPaths(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/2019-01-01/runtime/invocation/next"},
		{http.MethodPost, "/2018-06-01/runtime/invocation/next"},
		{http.MethodPost, "/2018-06-01/runtime/invocation/abc/other"},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+s.Addr()+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s %s: %d", tc.method, tc.path, resp.StatusCode)
		}
	}
}

// TestErrorInTrailer: aws-lambda-go reports an error met while streaming a
// response body in the Lambda-Runtime-Function-Error-Type trailer.
func TestErrorInTrailer(t *testing.T) {
	s := newServer(t)
	rt := newRuntime(t, s)
	ch := invokeAsync(s, Invocation{Payload: []byte(`{}`), Timeout: 5 * time.Second})
	id, _, _ := rt.next()
	req, _ := http.NewRequest(http.MethodPost, rt.base+"invocation/"+id+"/response", io.MultiReader(strings.NewReader(`{"partial":`)))
	req.ContentLength = -1
	req.Trailer = http.Header{HeaderErrorType: {"Runtime.StreamError"}, "Lambda-Runtime-Function-Error-Body": {"broken pipe"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	r := wait(t, ch)
	if r.Error == nil || r.Error.Type != "Runtime.StreamError" || r.Error.Message != "broken pipe" || r.Response != nil {
		t.Fatalf("result %+v error %+v", r, r.Error)
	}
}
