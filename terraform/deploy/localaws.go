package deploy

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Offline planning: `terraform plan -refresh=false` on an empty state calls
// AWS only for the data sources that read the account (aws_caller_identity)
// and for the provider's own credential check, both sts:GetCallerIdentity;
// everything else it needs is in the configuration. LocalAWS answers that one
// call on 127.0.0.1 with a placeholder account, so that a plan needs no
// credentials and no network, and refuses (and records) every other call, so
// that a caller can prove nothing else was asked.

// OfflineAccount and OfflineRegion are what an offline plan shows for the
// account and region: placeholders, not a real account.
const (
	OfflineAccount = "123456789012"
	OfflineRegion  = "eu-west-1"
)

// ErrUnexpectedCall reports a request to LocalAWS other than
// sts:GetCallerIdentity.
var ErrUnexpectedCall = errors.New("deploy: offline plan made an AWS call other than sts:GetCallerIdentity")

// LocalAWSCall is one request LocalAWS received.
type LocalAWSCall struct {
	// Action is the query protocol's Action ("GetCallerIdentity"), else the
	// X-Amz-Target header, else "<METHOD> <path>".
	Action string
	// Service is the signing service from the Authorization header ("sts").
	Service string
	// Answered is true for the calls LocalAWS answered (GetCallerIdentity).
	Answered bool
}

// LocalAWS is an HTTP server on 127.0.0.1 standing in for every AWS
// endpoint during an offline plan. It is safe for concurrent use.
type LocalAWS struct {
	// URL is the endpoint, e.g. "http://127.0.0.1:40123".
	URL string

	srv   *http.Server
	mu    sync.Mutex
	calls []LocalAWSCall
}

// StartLocalAWS starts a LocalAWS on a free port of 127.0.0.1.
func StartLocalAWS() (*LocalAWS, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("deploy: local AWS endpoint: %w", err)
	}
	l := &LocalAWS{URL: "http://" + ln.Addr().String()}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	return l, nil
}

// Close stops the server.
func (l *LocalAWS) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return l.srv.Shutdown(ctx)
}

// Calls returns the requests received so far, in arrival order.
func (l *LocalAWS) Calls() []LocalAWSCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LocalAWSCall(nil), l.calls...)
}

// Unexpected returns an error wrapping ErrUnexpectedCall that names every
// call other than sts:GetCallerIdentity, or nil.
func (l *LocalAWS) Unexpected() error {
	seen := map[string]bool{}
	for _, c := range l.Calls() {
		if !c.Answered {
			seen[c.Service+" "+c.Action] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Errorf("%w: %s", ErrUnexpectedCall, strings.Join(names, ", "))
}

// Env is the environment that points the AWS provider (and any AWS SDK) at
// l with placeholder credentials, in the offline region, reading no shared
// configuration, credentials file or instance metadata. Terraform gets it in
// place of the caller's AWS_* variables.
func (l *LocalAWS) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL":            l.URL,
		"AWS_ACCESS_KEY_ID":           "AKIAOFFLINEPLAN00000",
		"AWS_SECRET_ACCESS_KEY":       "offline-plan-not-a-secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  OfflineRegion,
		"AWS_DEFAULT_REGION":          OfflineRegion,
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             "/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_RETRY_MODE":              "standard",
		"AWS_MAX_ATTEMPTS":            "1",
	}
}

// ServeHTTP answers sts:GetCallerIdentity and refuses everything else.
func (l *LocalAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	form, _ := url.ParseQuery(string(body))
	call := LocalAWSCall{Action: form.Get("Action"), Service: signingService(r.Header.Get("Authorization"))}
	if call.Action == "" {
		call.Action = r.URL.Query().Get("Action")
	}
	if call.Action == "" {
		call.Action = r.Header.Get("X-Amz-Target")
	}
	if call.Action == "" {
		call.Action = r.Method + " " + r.URL.Path
	}
	call.Answered = call.Service == "sts" && call.Action == "GetCallerIdentity"
	l.mu.Lock()
	l.calls = append(l.calls, call)
	l.mu.Unlock()
	if !call.Answered {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse><Error><Type>Sender</Type><Code>OfflinePlan</Code><Message>streamfold offline plan: %s %s is not available offline (only sts:GetCallerIdentity is)</Message></Error><RequestId>offline</RequestId></ErrorResponse>`,
			html.EscapeString(call.Service), html.EscapeString(call.Action))
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>arn:aws:iam::%[1]s:user/streamfold-offline-plan</Arn>
    <UserId>AIDAOFFLINEPLAN00000</UserId>
    <Account>%[1]s</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata><RequestId>offline-plan</RequestId></ResponseMetadata>
</GetCallerIdentityResponse>`, OfflineAccount)
}

// signingService reads the service from a SigV4 Authorization header
// ("AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/sts/aws4_request, ...").
func signingService(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}
