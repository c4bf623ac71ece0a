// Package runtimeapi is a local implementation of the AWS Lambda Runtime API
// (version 2018-06-01), for tests that run a function's real `bootstrap`
// binary the way Lambda runs it: the binary is started with
// AWS_LAMBDA_RUNTIME_API set to Server.Addr, polls for invocations and posts
// their results back. The AWS Runtime Interface Emulator cannot be obtained
// on the machines this project is built on; the protocol is small and
// documented ("Using the Lambda runtime API for custom runtimes", AWS Lambda
// developer guide), and this package serves exactly it, on 127.0.0.1 only:
//
//	GET  /2018-06-01/runtime/invocation/next           the next event (blocks until one is queued),
//	     with the headers Lambda-Runtime-Aws-Request-Id, Lambda-Runtime-Deadline-Ms,
//	     Lambda-Runtime-Invoked-Function-Arn and Lambda-Runtime-Trace-Id
//	POST /2018-06-01/runtime/invocation/{id}/response   the invocation's result: 202
//	POST /2018-06-01/runtime/invocation/{id}/error      the invocation's error: 202; the body is
//	     {"errorMessage","errorType","stackTrace"}, the type may also come in the
//	     Lambda-Runtime-Function-Error-Type header
//	POST /2018-06-01/runtime/init/error                 an initialization error: 202
//
// A request ID that is not the invocation in flight gets 400 (errorType
// InvalidRequestID); a second result for an invocation, or an init error
// after the runtime has asked for an invocation, 403
// (InvalidStateTransition); a response over 6 MB (Lambda's synchronous
// limit) 413 (RequestEntityTooLarge), and the invocation then fails with
// errorType Function.ResponseSizeTooLarge, as Lambda reports it.
//
// The contract of Invoke, which is how a test drives the function, follows
// what a caller of Lambda sees:
//
//   - the result is the body the function posted to /response, or the error
//     it posted to /error (Result.Error, with its type and message);
//   - the invocation's deadline is set when the runtime receives it (the
//     invocation's Timeout from then). A result posted after the deadline is
//     discarded and the invocation is a timeout: Result.TimedOut, and an
//     error of type Sandbox.Timedout, "Task timed out after N seconds", as
//     Lambda logs it. An invocation with nothing posted a grace period after
//     its deadline is a timeout too (Lambda would then stop the sandbox; a
//     test should stop the process);
//   - Exited reports that the runtime process ended: the invocation in flight
//     and those queued then fail with Runtime.ExitError, as in Lambda.
//
// The server runs one invocation at a time (one execution environment).
package runtimeapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// pathPrefix starts every route: the API version and "runtime".
const pathPrefix = "/2018-06-01/runtime/"

// Headers of the protocol.
const (
	HeaderRequestID   = "Lambda-Runtime-Aws-Request-Id"       // the invocation's request ID (/next)
	HeaderDeadlineMs  = "Lambda-Runtime-Deadline-Ms"          // its deadline, Unix milliseconds (/next)
	HeaderFunctionARN = "Lambda-Runtime-Invoked-Function-Arn" // the function invoked (/next)
	HeaderTraceID     = "Lambda-Runtime-Trace-Id"             // the X-Ray trace header (/next)
	HeaderErrorType   = "Lambda-Runtime-Function-Error-Type"  // an error's type (/error, /init/error)
)

// MaxResponseBytes is Lambda's limit on a synchronous invocation's response.
const MaxResponseBytes = 6 * 1024 * 1024

// DefaultFunctionARN is sent when an Invocation names no function.
const DefaultFunctionARN = "arn:aws:lambda:us-east-1:123456789012:function:local"

// Error types the server reports itself, as Lambda does.
const (
	ErrorTypeTimeout      = "Sandbox.Timedout"
	ErrorTypeExit         = "Runtime.ExitError"
	ErrorTypeResponseSize = "Function.ResponseSizeTooLarge"
)

// ErrClosed is returned by Invoke once the server is closed.
var ErrClosed = errors.New("runtimeapi: server closed")

// Invocation is one event to deliver.
type Invocation struct {
	// Payload is the event, JSON, delivered as the body of /next.
	Payload []byte
	// Timeout is the function's timeout: the deadline is Timeout after the
	// runtime receives the event. Zero gives a deadline that has passed when
	// the event is delivered (a test of timeouts); negative is an error.
	Timeout time.Duration
	// FunctionARN is sent as Lambda-Runtime-Invoked-Function-Arn
	// (default DefaultFunctionARN).
	FunctionARN string
}

// FunctionError is an error as Lambda reports it to a caller.
type FunctionError struct {
	// Type is the errorType (or the Lambda-Runtime-Function-Error-Type
	// header when the body has none).
	Type string `json:"errorType"`
	// Message is the errorMessage.
	Message string `json:"errorMessage"`
	// Header is the Lambda-Runtime-Function-Error-Type header as posted.
	Header string `json:"-"`
	// Body is the body as posted (for an error the server made up, the JSON above).
	Body []byte `json:"-"`
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// Result is what the caller of an invocation gets.
type Result struct {
	RequestID string
	// Deadline is the deadline sent with the event (zero if never delivered).
	Deadline time.Time
	// Response is the body posted to /response (nil on error or timeout).
	Response []byte
	// Error is the invocation's error: posted to /error, or made up by the
	// server for a timeout, an oversized response or a runtime exit.
	Error *FunctionError
	// TimedOut reports a result that came after the deadline, or none.
	TimedOut bool
	// Late is what the function posted after its deadline (discarded).
	Late []byte
}

// Server serves the Runtime API on 127.0.0.1. Create it with New.
type Server struct {
	ln    net.Listener
	srv   *http.Server
	grace time.Duration

	mu       sync.Mutex
	queue    []*pending
	ready    chan struct{} // signalled when the queue grows or the server closes
	inflight *pending
	polled   chan struct{} // closed at the first /next
	polledOK bool
	initErr  *FunctionError
	initCh   chan struct{} // closed when an init error is posted
	exited   error
	closed   bool
}

type pending struct {
	inv      Invocation
	id       string
	deadline time.Time
	done     chan Result
	finished bool
}

// Option configures a Server.
type Option func(*Server)

// WithGrace sets how long after an invocation's deadline Invoke waits for a
// result before it reports a timeout (default 2 s).
func WithGrace(d time.Duration) Option { return func(s *Server) { s.grace = d } }

// New starts a server on 127.0.0.1 on a free port.
func New(opts ...Option) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runtimeapi: listen: %w", err)
	}
	s := &Server{
		ln: ln, grace: 2 * time.Second,
		ready: make(chan struct{}, 1), polled: make(chan struct{}),
		initCh: make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the value of AWS_LAMBDA_RUNTIME_API: host:port, no scheme.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server; queued and in-flight invocations fail with ErrClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.signal()
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	return s.srv.Close()
}

// signal wakes a waiting /next; s.mu is held.
func (s *Server) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Polled is closed when the runtime first asks for an invocation: its
// initialization is over.
func (s *Server) Polled() <-chan struct{} { return s.polled }

// InitFailed is closed when the runtime posts an init error.
func (s *Server) InitFailed() <-chan struct{} { return s.initCh }

// InitError is the init error the runtime posted, or nil.
func (s *Server) InitError() *FunctionError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initErr
}

// Exited records that the runtime process ended (err is its exit error, or
// nil for a clean exit): the invocation in flight and those queued fail
// with Runtime.ExitError.
func (s *Server) Exited(err error) {
	msg := "Runtime exited without providing a reason"
	if err != nil {
		msg = "Runtime exited with error: " + err.Error()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited != nil {
		return
	}
	s.exited = errors.New(msg)
	fail := func(p *pending) {
		p.finish(Result{RequestID: p.id, Deadline: p.deadline, Error: made(ErrorTypeExit, "RequestId: "+p.id+" Error: "+msg)})
	}
	if s.inflight != nil {
		fail(s.inflight)
		s.inflight = nil
	}
	for _, p := range s.queue {
		fail(p)
	}
	s.queue = nil
}

func made(typ, msg string) *FunctionError {
	e := &FunctionError{Type: typ, Message: msg}
	e.Body, _ = json.Marshal(e)
	return e
}

func (p *pending) finish(r Result) {
	if p.finished {
		return
	}
	p.finished = true
	p.done <- r
}

// Invoke queues inv and waits for its result: the function's response or
// error, a timeout, or the runtime's exit. The error is non-nil only when
// the invocation could not be made (bad Invocation, server closed, ctx
// done); a function error is in Result.Error.
func (s *Server) Invoke(ctx context.Context, inv Invocation) (Result, error) {
	if inv.Timeout < 0 {
		return Result{}, fmt.Errorf("runtimeapi: Invocation.Timeout: must not be negative, got %v", inv.Timeout)
	}
	if !json.Valid(inv.Payload) {
		return Result{}, errors.New("runtimeapi: Invocation.Payload: must be JSON")
	}
	inv.FunctionARN = cmp.Or(inv.FunctionARN, DefaultFunctionARN)
	p := &pending{inv: inv, id: newID(), done: make(chan Result, 1)}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return Result{}, ErrClosed
	case s.exited != nil:
		p.finish(Result{RequestID: p.id, Error: made(ErrorTypeExit, "RequestId: "+p.id+" Error: "+s.exited.Error())})
	default:
		s.queue = append(s.queue, p)
		s.signal()
	}
	s.mu.Unlock()

	var timer <-chan time.Time
	for {
		select {
		case r := <-p.done:
			return r, nil
		case <-ctx.Done():
			s.abandon(p)
			return Result{}, ctx.Err()
		case <-timer:
			s.mu.Lock()
			if !p.finished {
				p.finish(Result{RequestID: p.id, Deadline: p.deadline, TimedOut: true, Error: timeoutError(p)})
			}
			s.mu.Unlock()
		case <-time.After(50 * time.Millisecond):
			// Start the timeout clock once the event is delivered.
			s.mu.Lock()
			if timer == nil && !p.deadline.IsZero() {
				timer = time.After(time.Until(p.deadline) + s.grace)
			}
			s.mu.Unlock()
		}
	}
}

func (s *Server) abandon(p *pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q == p {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
		}
	}
	p.finished = true
}

func timeoutError(p *pending) *FunctionError {
	return made(ErrorTypeTimeout, fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", p.id, p.inv.Timeout.Seconds()))
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, pathPrefix)
	switch {
	case !ok:
		apiError(w, http.StatusNotFound, "NotFound", "not a Runtime API path: "+r.URL.Path)
	case rest == "invocation/next" && r.Method == http.MethodGet:
		s.next(w, r)
	case rest == "init/error" && r.Method == http.MethodPost:
		s.initError(w, r)
	case strings.HasPrefix(rest, "invocation/") && r.Method == http.MethodPost:
		id, what, _ := strings.Cut(strings.TrimPrefix(rest, "invocation/"), "/")
		switch what {
		case "response":
			s.result(w, r, id, false)
		case "error":
			s.result(w, r, id, true)
		default:
			apiError(w, http.StatusNotFound, "NotFound", "unknown path "+r.URL.Path)
		}
	default:
		apiError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" "+r.URL.Path)
	}
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": msg})
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

// next blocks until an invocation is queued, then delivers it.
func (s *Server) next(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if !s.polledOK {
		s.polledOK = true
		close(s.polled)
	}
	if s.inflight != nil && !s.inflight.finished {
		// The runtime moved on without a result: Lambda treats the
		// invocation as failed.
		s.inflight.finish(Result{RequestID: s.inflight.id, Deadline: s.inflight.deadline,
			Error: made("Runtime.InvalidStateTransition", "the runtime asked for the next invocation without posting a result for "+s.inflight.id)})
	}
	s.inflight = nil
	s.mu.Unlock()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			apiError(w, http.StatusInternalServerError, "ServerClosed", "the runtime API server is closed")
			return
		}
		if len(s.queue) > 0 {
			p := s.queue[0]
			s.queue = s.queue[1:]
			p.deadline = time.Now().Add(p.inv.Timeout)
			s.inflight = p
			s.mu.Unlock()
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set(HeaderRequestID, p.id)
			h.Set(HeaderDeadlineMs, strconv.FormatInt(p.deadline.UnixMilli(), 10))
			h.Set(HeaderFunctionARN, p.inv.FunctionARN)
			h.Set(HeaderTraceID, "Root=1-"+strconv.FormatInt(time.Now().Unix(), 16)+"-"+strings.ReplaceAll(p.id, "-", "")[:24]+";Parent="+strings.ReplaceAll(p.id, "-", "")[16:]+";Sampled=0")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(p.inv.Payload)
			return
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) result(w http.ResponseWriter, r *http.Request, id string, isErr bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxResponseBytes+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "reading the body: "+err.Error())
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.inflight
	switch {
	case p == nil || p.id != id:
		apiError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation in flight with request ID "+id)
		return
	case p.finished && !now.After(p.deadline):
		apiError(w, http.StatusForbidden, "InvalidStateTransition", "invocation "+id+" already has a result")
		return
	}
	res := Result{RequestID: id, Deadline: p.deadline}
	if now.After(p.deadline) {
		// Lambda discards a result that comes after the deadline.
		res.TimedOut, res.Error, res.Late = true, timeoutError(p), body
		p.finish(res)
		accepted(w)
		return
	}
	switch {
	case len(body) > MaxResponseBytes:
		p.finish(Result{RequestID: id, Deadline: p.deadline, Error: made(ErrorTypeResponseSize,
			fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", MaxResponseBytes))})
		apiError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the response is over 6 MB")
		return
	case isErr:
		res.Error = parseError(body, r.Header.Get(HeaderErrorType))
	case r.Trailer.Get(HeaderErrorType) != "":
		// aws-lambda-go reports an error while streaming the response
		// body in a trailer.
		res.Error = &FunctionError{Type: r.Trailer.Get(HeaderErrorType), Message: r.Trailer.Get("Lambda-Runtime-Function-Error-Body"), Body: body}
	default:
		res.Response = body
	}
	p.finish(res)
	accepted(w)
}

func parseError(body []byte, header string) *FunctionError {
	e := &FunctionError{}
	_ = json.Unmarshal(body, e)
	e.Header, e.Body = header, body
	e.Type = cmp.Or(e.Type, header)
	e.Type = cmp.Or(e.Type, "Unhandled")
	return e
}

func (s *Server) initError(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxResponseBytes))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "reading the body: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.polledOK {
		apiError(w, http.StatusForbidden, "InvalidStateTransition", "init error after the runtime asked for an invocation")
		return
	}
	if s.initErr == nil {
		s.initErr = parseError(body, r.Header.Get(HeaderErrorType))
		close(s.initCh)
	}
	accepted(w)
}
