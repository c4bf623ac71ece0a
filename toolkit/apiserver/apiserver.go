// Package apiserver provides the workflow of "streamfold serve": the HTTP
// JSON API and dashboard (the handler the API Lambda function serves) and,
// beside them, the ingest routes (the ingest Lambda function's handler:
// POST /webhooks/github, /events and /eventbridge) over one deployment's
// tables, on one local listener.
//
// New decides (it validates the options, builds the handlers and settles
// the secrets, generating those not given); Listen binds the address;
// WriteText says where the server is and which secrets were generated;
// Serve serves until its context ends, then shuts down gracefully.
package apiserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/deadletter"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/internal/opsview"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/emit"
)

// DefaultAddr is where the server listens when Options.Addr is empty.
const DefaultAddr = "127.0.0.1:8080"

// ShutdownTimeout is how long Serve waits for the requests in flight once
// its context ends.
const ShutdownTimeout = 10 * time.Second

// Options are one server's settings.
type Options struct {
	// Addr is the address to listen on (host:port; port 0 picks a free
	// one); empty is DefaultAddr.
	Addr string
	// Token is the API's bearer token (16 characters or more); empty
	// generates one.
	Token string
	// CursorKey signs cursors (16 bytes or more); empty makes a random
	// key, so cursors stop working when the server restarts.
	CursorKey string
	// MaxPageSize is the largest ?limit= accepted; zero is the API's
	// default and upper bound, 200.
	MaxPageSize int
	// Ingest serves the ingest routes beside the read side.
	Ingest bool
	// WebhookSecret is the secret GitHub signs deliveries with; empty
	// generates one.
	WebhookSecret string
	// IngestToken is the bearer token of POST /events and /eventbridge
	// (16 characters or more); empty generates one.
	IngestToken string
	// SFNTags is where POST /eventbridge takes a state machine's tags from
	// when the event has no detail.stateMachineTags (emit.TagSource).
	SFNTags string
	// SFNPayloads is what is kept of a Step Functions execution's input,
	// output and cause on every ingest route: "hash" (empty), "drop" or
	// "keep".
	SFNPayloads string
	// MaxFutureSkew rejects an event whose time is further ahead of its
	// append; zero is ingest.DefaultMaxFutureSkew.
	MaxFutureSkew time.Duration
	// GSIShards is the deployment's write sharding (0: off).
	GSIShards int
	// Logger logs requests (at Info) and failures; nil is slog.Default().
	Logger *slog.Logger
	// Now is the API's clock; nil is time.Now.
	Now func() time.Time
}

// Validate checks the options; its errors name the field at fault.
func (o *Options) Validate() error {
	switch {
	case o.Token != "" && len(o.Token) < api.MinTokenLength:
		return toolkit.Invalid("serve", "Token", nil, fmt.Sprintf("must be at least %d characters, got %d", api.MinTokenLength, len(o.Token)))
	case o.CursorKey != "" && len(o.CursorKey) < query.MinCursorKeyBytes:
		return toolkit.Invalid("serve", "CursorKey", nil, fmt.Sprintf("must be at least %d bytes, got %d", query.MinCursorKeyBytes, len(o.CursorKey)))
	case o.MaxPageSize < 0 || o.MaxPageSize > query.DefaultMaxPageSize:
		return toolkit.Invalid("serve", "MaxPageSize", nil, fmt.Sprintf("must be between 0 (default) and %d, got %d", query.DefaultMaxPageSize, o.MaxPageSize))
	}
	if o.Ingest && o.IngestToken != "" {
		if err := ingest.CheckToken([]byte(o.IngestToken)); err != nil {
			return toolkit.Invalid("serve", "IngestToken", err, "")
		}
	}
	if o.Ingest && o.WebhookSecret != "" {
		if err := ingest.CheckWebhookSecret([]byte(o.WebhookSecret)); err != nil {
			return toolkit.Invalid("serve", "WebhookSecret", err, "")
		}
	}
	return emit.CheckAppendSettings("serve", o.SFNPayloads, o.MaxFutureSkew)
}

// Server is a server built by New: what it serves and with which secrets.
type Server struct {
	// Tables names the tables served, PREFIX-STAGE-*.
	Tables string
	// Token is the API's bearer token; TokenGenerated says New made it.
	Token          string
	TokenGenerated bool
	// IngestPaths are the ingest routes; none without Options.Ingest.
	IngestPaths []string
	// WebhookSecret and IngestToken are the ingest routes' secrets; the
	// Generated fields say New made them.
	WebhookSecret, IngestToken                   string
	WebhookSecretGenerated, IngestTokenGenerated bool

	addr string
	ln   net.Listener
	srv  *http.Server
}

// New builds the server of n's tables through c (local: a local DynamoDB,
// where POST /eventbridge asks no AWS for tags by default).
func New(c *awsclient.Clients, n schema.Naming, local bool, o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{Tables: n.Table("*"), Token: o.Token, addr: o.Addr}
	if s.addr == "" {
		s.addr = DefaultAddr
	}
	key := []byte(o.CursorKey)
	if len(key) == 0 {
		key = random(32)
	}
	if s.Token == "" {
		s.Token, s.TokenGenerated = base64.RawURLEncoding.EncodeToString(random(24)), true
	}
	qc, err := query.New(c.DynamoDB, n, query.Config{CursorKey: key, GSIShards: o.GSIShards, JobFold: func() query.JobFold { return projector.NewJobFold() }})
	if err != nil {
		return nil, toolkit.Invalid("serve", "CursorKey", err, "")
	}
	ops, err := opsview.New(opsview.Config{
		Records:     opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)},
		DeadLetters: deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters)),
		Naming:      n,
	})
	if err != nil {
		return nil, toolkit.Invalid("serve", "Naming", err, "")
	}
	read, err := api.New(api.Config{Now: o.Now, Operations: ops, Queries: qc, Token: s.Token, Dashboard: dashboard.Handler(), MaxPageSize: o.MaxPageSize, Logger: log})
	if err != nil {
		return nil, toolkit.Invalid("serve", "Token", err, "")
	}
	handler := http.Handler(read)
	if o.Ingest {
		if handler, err = s.withIngest(c, n, local, o, read, log); err != nil {
			return nil, err
		}
	}
	s.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	return s, nil
}

// withIngest serves the ingest routes (ingest.HTTPHandler, the ingest
// Lambda function URL's handler, appending to n's event table) beside
// read, which keeps every other path. Locally, POST /eventbridge takes an
// event's detail.stateMachineTags as its state machine's tags.
func (s *Server) withIngest(c *awsclient.Clients, n schema.Naming, local bool, o Options, read http.Handler, log *slog.Logger) (http.Handler, error) {
	tags, err := emit.TagSource(o.SFNTags, local, func() ingest.TagLister { return sfn.NewFromConfig(c.AWS) })
	if err != nil {
		return nil, toolkit.Invalid("serve", "SFNTags", err, "")
	}
	s.WebhookSecret, s.IngestToken = o.WebhookSecret, o.IngestToken
	if s.WebhookSecret == "" {
		s.WebhookSecret, s.WebhookSecretGenerated = hex.EncodeToString(random(20)), true
	}
	if s.IngestToken == "" {
		s.IngestToken, s.IngestTokenGenerated = base64.RawURLEncoding.EncodeToString(random(24)), true
	}
	payloads, _ := ingest.ParsePayloadPolicy(cmp.Or(o.SFNPayloads, "hash"))
	appender, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{
		Table: n.Table(schema.TableEvents), Payloads: payloads, MaxFutureSkew: o.MaxFutureSkew,
		DeadLetters: deadletter.NewTable(c.DynamoDB, n.Table(schema.TableDeadLetters)),
	})
	if err != nil {
		return nil, toolkit.Invalid("serve", "Appender", err, "")
	}
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{
		Appender: appender, WebhookSecret: ingest.StaticSecret(s.WebhookSecret), Token: ingest.StaticSecret(s.IngestToken),
		StepFunctionsTags: tags, StepFunctionsPayloads: payloads, DetailTags: true, Log: log,
	})
	if err != nil {
		return nil, toolkit.Invalid("serve", "Ingest", err, "")
	}
	s.IngestPaths = h.Paths()
	mux := http.NewServeMux()
	for _, p := range s.IngestPaths {
		mux.Handle(p, h)
	}
	mux.Handle("/", read)
	return mux, nil
}

// Listen binds the server's address.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.addr, err)
	}
	s.ln = ln
	return nil
}

// URL is the server's base URL once it listens (http://HOST:PORT).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// WriteText says where the server listens, where the dashboard is, and
// the secrets New generated (not those given).
func (s *Server) WriteText(w io.Writer) error {
	var b strings.Builder
	base := s.URL()
	fmt.Fprintf(&b, "streamfold: serving %s tables on %s (API under /api/)\n", s.Tables, base)
	if s.TokenGenerated {
		fmt.Fprintf(&b, "streamfold: generated API token; open the dashboard at %s/#token=%s\n", base, s.Token)
	} else {
		fmt.Fprintf(&b, "streamfold: open the dashboard at %s/ (it asks for the token)\n", base)
	}
	if len(s.IngestPaths) > 0 {
		fmt.Fprintf(&b, "streamfold: ingest on %s: POST %s\n", base, strings.Join(s.IngestPaths, ", POST "))
		if s.WebhookSecretGenerated {
			fmt.Fprintf(&b, "streamfold: generated GitHub webhook secret (give GitHub the same, or pass --webhook-secret): %s\n", s.WebhookSecret)
		}
		if s.IngestTokenGenerated {
			fmt.Fprintf(&b, "streamfold: generated ingest token (Authorization: Bearer TOKEN on /events and /eventbridge; or pass --ingest-token): %s\n", s.IngestToken)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Serve serves on the listener Listen bound until ctx ends, then calls
// stopping (when not nil), stops accepting requests and waits up to
// ShutdownTimeout for the ones in flight.
func (s *Server) Serve(ctx context.Context, stopping func()) error {
	if s.ln == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if stopping != nil {
		stopping()
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // cannot fail on supported platforms
	}
	return b
}
