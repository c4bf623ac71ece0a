package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/streamfold/streamfold/api"
	"github.com/streamfold/streamfold/dashboard"
	"github.com/streamfold/streamfold/query"
)

func init() {
	register(command{name: "serve", summary: "serve the HTTP JSON API and the dashboard locally", run: runServe})
}

const serveHelp = `Usage: streamfold serve [flags]

Serves the read side over HTTP: the JSON API under /api/ (every query
pattern; see docs/api.md) and the dashboard page at /. It is the same
handler the API Lambda function serves behind its function URL.

Every /api/ request except /api/health needs "Authorization: Bearer TOKEN".
The token comes from --token or STREAMFOLD_API_TOKEN (16 characters or
more); with neither, a random token is generated and the dashboard URL with
it is printed on standard error (http://ADDR/#token=...; the token stays in
the URL fragment, which browsers never send to the server).

Cursors are signed with --cursor-key or STREAMFOLD_CURSOR_KEY; without one,
a random key is made at start, so cursors stop working when the server
restarts.

Ctrl-C (or SIGTERM) stops accepting requests and waits up to 10 s for the
ones in flight.

Examples:
  streamfold serve
  STREAMFOLD_API_TOKEN=$(openssl rand -hex 16) streamfold serve --addr 127.0.0.1:8080
  curl -H "Authorization: Bearer $STREAMFOLD_API_TOKEN" "http://127.0.0.1:8080/api/messages?stage=dev"

Exit status: 0 stopped cleanly; 2 usage error; 3 the address could not be
bound or the server failed.

Flags:
`

func runServe(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var g globals
	g.register(fs, env)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	token := fs.String("token", env.getenv("STREAMFOLD_API_TOKEN"), "bearer token of the API (env STREAMFOLD_API_TOKEN; default: a random one, printed)")
	keyFlag := fs.String("cursor-key", env.getenv("STREAMFOLD_CURSOR_KEY"), "key signing cursors, 16 bytes or more (env STREAMFOLD_CURSOR_KEY; default: random per start)")
	maxPage := fs.Int("max-page-size", 0, "largest ?limit= accepted (default and upper bound 200)")
	verbose := fs.Bool("v", false, "log every request on standard error")
	fs.Usage = func() { fmt.Fprint(env.stderr, serveHelp); fs.PrintDefaults() }
	if code, ok := parse(fs, env, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return errorf(env, exitUsage, "serve: unexpected argument %q", fs.Arg(0))
	}
	n, err := g.naming()
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	key := []byte(*keyFlag)
	if len(key) == 0 {
		key = serveRandom(32)
	}
	generated := *token == ""
	if generated {
		*token = base64.RawURLEncoding.EncodeToString(serveRandom(24))
	}
	clients, err := g.clients(ctx)
	if err != nil {
		return errorf(env, exitRuntime, "serve: %v", err)
	}
	qc, err := query.New(clients.DynamoDB, n, query.Config{CursorKey: key})
	if err != nil {
		return errorf(env, exitUsage, "serve: --cursor-key: %v", err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	h, err := api.New(api.Config{
		Queries:     qc,
		Token:       *token,
		Dashboard:   dashboard.Handler(),
		MaxPageSize: *maxPage,
		Logger:      log,
	})
	if err != nil {
		return errorf(env, exitUsage, "serve: %v", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errorf(env, exitRuntime, "serve: listen %s: %v", *addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.stderr, "streamfold: serving %s tables on %s (API under /api/)\n", n.Table("*"), base)
	if generated {
		fmt.Fprintf(env.stderr, "streamfold: generated API token; open the dashboard at %s/#token=%s\n", base, *token)
	} else {
		fmt.Fprintf(env.stderr, "streamfold: open the dashboard at %s/ (it asks for the token)\n", base)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return errorf(env, exitRuntime, "serve: %v", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(env.stderr, "streamfold: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return errorf(env, exitRuntime, "serve: shutdown: %v", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return errorf(env, exitRuntime, "serve: %v", err)
	}
	return exitOK
}

func serveRandom(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // cannot fail on supported platforms
	}
	return b
}
