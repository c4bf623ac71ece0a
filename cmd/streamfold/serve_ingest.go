package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/schema"
)

// serveIngest is the ingest side of `streamfold serve`: ingest.HTTPHandler,
// the handler of the ingest Lambda's function URL, over the local tables.
type serveIngest struct {
	handler                     *ingest.HTTPHandler
	secret, token               string
	secretGenerated, tokenGiven bool
}

// newServeIngest builds the ingest handler appending to n's event table
// with app's settings (its Table is set here; its payload policy applies on
// every route, and POST /eventbridge's adapter gets it too). An empty
// secret or token is generated. Locally, POST /eventbridge takes an
// event's detail.stateMachineTags as its state machine's tags, and asks
// tags otherwise.
func newServeIngest(ddb ingest.PutItemAPI, n schema.Naming, secret, token string, tags ingest.TagSource, app ingest.AppenderConfig, log *slog.Logger) (*serveIngest, error) {
	s := &serveIngest{secret: secret, token: token, tokenGiven: token != ""}
	if s.secret == "" {
		s.secret, s.secretGenerated = hex.EncodeToString(serveRandom(20)), true
	}
	if s.token == "" {
		s.token = base64.RawURLEncoding.EncodeToString(serveRandom(24))
	}
	app.Table = n.Table(schema.TableEvents)
	appender, err := ingest.NewAppender(ddb, app)
	if err != nil {
		return nil, err
	}
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{
		Appender:              appender,
		WebhookSecret:         ingest.StaticSecret(s.secret),
		Token:                 ingest.StaticSecret(s.token),
		StepFunctionsTags:     tags,
		StepFunctionsPayloads: app.Payloads,
		DetailTags:            true,
		Log:                   log,
	})
	if err != nil {
		return nil, err
	}
	s.handler = h
	return s, nil
}

// announce prints the ingest routes and the secrets that were generated.
func (s *serveIngest) announce(w io.Writer, base string) {
	fmt.Fprintf(w, "streamfold: ingest on %s: POST %s\n", base, strings.Join(s.handler.Paths(), ", POST "))
	if s.secretGenerated {
		fmt.Fprintf(w, "streamfold: generated GitHub webhook secret (give GitHub the same, or pass --webhook-secret): %s\n", s.secret)
	}
	if !s.tokenGiven {
		fmt.Fprintf(w, "streamfold: generated ingest token (Authorization: Bearer TOKEN on /events and /eventbridge; or pass --ingest-token): %s\n", s.token)
	}
}

// serveMux serves the ingest routes (when in is not nil) beside the read
// API and dashboard handler, which keeps every other path.
func serveMux(read http.Handler, in *serveIngest) http.Handler {
	if in == nil {
		return read
	}
	mux := http.NewServeMux()
	for _, p := range in.handler.Paths() {
		mux.Handle(p, in.handler)
	}
	mux.Handle("/", read)
	return mux
}
