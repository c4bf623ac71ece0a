package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/query"
	"github.com/streamfold/streamfold/schema"
)

const token = "test-token-0123456789"

var cursorKey = []byte("api-test-cursor-key-0123456789")

// fakeDB answers GetItem for one execution and pages every Query: the
// first page of a query has one item and a LastEvaluatedKey made of the
// key attributes the query's index needs, the second page ends it.
type fakeDB struct {
	mu      sync.Mutex // merged reads send their Queries in parallel
	queries []*dynamodb.QueryInput
	scans   []*dynamodb.ScanInput
	fail    error
}

const knownARN = "arn:aws:states:us-west-2:123:execution:my-agent-prod:abc/123"

func (f *fakeDB) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	if a, ok := in.Key["executionArn"].(*types.AttributeValueMemberS); ok && a.Value == knownARN {
		return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{
			"executionArn": &types.AttributeValueMemberS{Value: knownARN}, "status": &types.AttributeValueMemberS{Value: "SUCCEEDED"},
			"durationSeconds": &types.AttributeValueMemberN{Value: "10"},
		}}, nil
	}
	return &dynamodb.GetItemOutput{}, nil
}

func (f *fakeDB) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, in)
	if f.fail != nil {
		return nil, f.fail
	}
	item := map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1"}}
	if in.ExclusiveStartKey != nil {
		return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{item}, Count: 1, ScannedCount: 1}, nil
	}
	lek := map[string]types.AttributeValue{}
	table := strings.TrimPrefix(aws.ToString(in.TableName), "unit-dev-")
	spec, _ := schema.TableSpec(table)
	add := func(k schema.KeyAttr) {
		if k.Type == schema.Number {
			lek[k.Name] = &types.AttributeValueMemberN{Value: "7"}
		} else {
			lek[k.Name] = &types.AttributeValueMemberS{Value: "k"}
		}
	}
	add(spec.Hash)
	if spec.Range != nil {
		add(*spec.Range)
	}
	for _, ix := range spec.Indexes {
		if ix.Name == aws.ToString(in.IndexName) {
			for _, k := range append(ix.Hash, ix.Range...) {
				add(k)
			}
		}
	}
	return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{item}, Count: 1, ScannedCount: 1, LastEvaluatedKey: lek}, nil
}

func (f *fakeDB) BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	return &dynamodb.BatchGetItemOutput{}, nil
}

var fixedNow = time.Date(2030, 1, 15, 20, 0, 0, 0, time.UTC)

func newHandler(t *testing.T, db *fakeDB, mutate func(*Config)) http.Handler {
	t.Helper()
	q, err := query.New(db, schema.Naming{Prefix: "unit", Stage: "dev"}, query.Config{CursorKey: cursorKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Queries: q, Token: token, Now: func() time.Time { return fixedNow },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func do(t *testing.T, h http.Handler, method, target, auth string) response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v\n%s", method, target, err, rec.Body.String())
		}
	}
	return r
}

func (r response) errorCode() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (r response) errorField(k string) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e[k].(string)
	return s
}

const bearer = "Bearer " + token

func TestConfigValidate(t *testing.T) {
	q, err := query.New(&fakeDB{}, schema.Naming{Prefix: "unit", Stage: "dev"}, query.Config{CursorKey: cursorKey})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no queries", Config{Token: token}, "api: Config.Queries: is required"},
		{"no token", Config{Queries: q}, "api: Config.Token: must be at least 16 characters (or set AllowUnauthenticated)"},
		{"short token", Config{Queries: q, Token: "secret"}, "api: Config.Token: must be at least 16 characters (or set AllowUnauthenticated)"},
		{"token and unauthenticated", Config{Queries: q, Token: token, AllowUnauthenticated: true}, "api: Config.Token: must be empty when AllowUnauthenticated is set"},
		{"page size above the client's", Config{Queries: q, Token: token, MaxPageSize: 500}, "api: Config.MaxPageSize: must be between 0 (default) and the query client's 200, got 500"},
		{"ok", Config{Queries: q, Token: token}, ""},
		{"ok unauthenticated", Config{Queries: q, AllowUnauthenticated: true, MaxPageSize: 20}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("err %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStatusCodesAndErrorBodies(t *testing.T) {
	h := newHandler(t, &fakeDB{}, nil)
	escaped := "/api/executions/" + url.PathEscape(knownARN)
	tests := []struct {
		name, method, target, auth string
		status                     int
		code, param                string
		message                    string // a substring of the message
	}{
		{"health needs no token", "GET", "/api/health", "", 200, "", "", ""},
		{"no token", "GET", "/api/executions?agent=a", "", 401, "unauthorized", "", "bearer token"},
		{"wrong token", "GET", "/api/executions?agent=a", "Bearer not-the-token-at-all", 401, "unauthorized", "", ""},
		{"token prefix only", "GET", "/api/executions?agent=a", "Bearer " + token[:len(token)-1], 401, "unauthorized", "", ""},
		{"basic auth", "GET", "/api/executions?agent=a", "Basic dXNlcjpwYXNz", 401, "unauthorized", "", ""},
		{"unknown route needs a token", "GET", "/api/nothing", "", 401, "unauthorized", "", ""},
		{"unknown route", "GET", "/api/nothing", bearer, 404, "not_found", "", "no such endpoint"},
		{"post", "POST", "/api/executions?agent=a", bearer, 405, "method_not_allowed", "", "use GET"},
		{"delete without token", "DELETE", "/api/messages/x", "", 401, "unauthorized", "", ""},
		{"post to health", "POST", "/api/health", "", 405, "method_not_allowed", "", ""},
		{"neither agent nor status: every agent's", "GET", "/api/executions", bearer, 200, "", "", ""},
		{"both agent and status", "GET", "/api/executions?agent=a&status=FAILED", bearer, 400, "invalid_parameter", "agent", "at most one of agent or status"},
		{"page size above the limit", "GET", "/api/executions?agent=a&limit=201", bearer, 400, "invalid_parameter", "limit", "limit: must be at most 200"},
		{"page size not a number", "GET", "/api/executions?agent=a&limit=ten", bearer, 400, "invalid_parameter", "limit", ""},
		{"unknown parameter", "GET", "/api/executions?agent=a&agentName=b", bearer, 400, "invalid_parameter", "agentName", "not a parameter"},
		{"repeated parameter", "GET", "/api/executions?agent=a&agent=b", bearer, 400, "invalid_parameter", "agent", "given once"},
		{"bad time", "GET", "/api/executions?agent=a&from=yesterday", bearer, 400, "invalid_parameter", "from", "from: must be RFC3339"},
		{"bad status", "GET", "/api/executions?status=DONE", bearer, 400, "invalid_parameter", "status", ""},
		{"garbage cursor", "GET", "/api/executions?agent=a&cursor=abc", bearer, 400, "bad_cursor", "cursor", "not valid for this query"},
		{"escaped ARN", "GET", escaped, bearer, 200, "", "", ""},
		{"unknown ARN", "GET", "/api/executions/" + url.PathEscape("arn:aws:states:x"), bearer, 404, "not_found", "", "execution"},
		{"job installation not a number", "GET", "/api/jobs/x/1", bearer, 400, "invalid_parameter", "installation", ""},
		{"job id zero", "GET", "/api/jobs/1/0", bearer, 400, "invalid_parameter", "id", ""},
		{"jobs without installation", "GET", "/api/jobs?status=queued", bearer, 400, "invalid_parameter", "installation", "is required"},
		{"jobs repo and status", "GET", "/api/jobs?installation=1&repo=a/b&status=queued", bearer, 400, "invalid_parameter", "repo", ""},
		{"jobs since without repo", "GET", "/api/jobs?installation=1&status=queued&since=2030-01-01T00:00:00Z", bearer, 400, "invalid_parameter", "since", ""},
		{"stuck hours negative", "GET", "/api/jobs?installation=1&stuckHours=-2", bearer, 400, "invalid_parameter", "stuckHours", ""},
		{"metrics bad date", "GET", "/api/metrics?date=2030-13-01&workflowType=sf", bearer, 400, "invalid_parameter", "date", ""},
		{"metrics nothing", "GET", "/api/metrics", bearer, 400, "invalid_parameter", "date", ""},
		{"messages without filter", "GET", "/api/messages", bearer, 400, "invalid_parameter", "stage", ""},
		{"stats hours too many", "GET", "/api/messages/stats?hours=10000", bearer, 400, "invalid_parameter", "hours", ""},
		{"run attempt not a number", "GET", "/api/runs/1/2/x", bearer, 400, "invalid_parameter", "attempt", ""},
		{"no dashboard", "GET", "/", "", 404, "not_found", "", "no dashboard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, tt.method, tt.target, tt.auth)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatalf("content type %q", r.header.Get("Content-Type"))
			}
			if tt.status >= 400 {
				if r.errorCode() != tt.code || r.errorField("param") != tt.param || !strings.Contains(r.errorField("message"), tt.message) {
					t.Fatalf("error body %s, want code %q param %q message ~%q", r.raw, tt.code, tt.param, tt.message)
				}
				if len(r.body) != 1 {
					t.Fatalf("error body has more than error: %s", r.raw)
				}
			}
			switch tt.status {
			case 401:
				if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
				}
				if strings.Contains(r.raw, token) {
					t.Fatal("the token leaks into the body")
				}
			case 405:
				if r.header.Get("Allow") != "GET" {
					t.Fatalf("Allow %q", r.header.Get("Allow"))
				}
			}
		})
	}
	t.Run("escaped ARN body", func(t *testing.T) {
		r := do(t, h, "GET", escaped, bearer)
		if r.body["executionArn"] != knownARN || r.body["durationSeconds"] != float64(10) {
			t.Fatalf("body %s", r.raw)
		}
	})
}

func TestPagingOverHTTP(t *testing.T) {
	db := &fakeDB{}
	h := newHandler(t, db, func(c *Config) { c.MaxPageSize = 50 })
	first := do(t, h, "GET", "/api/messages?stage=dev&limit=1", bearer)
	next, _ := first.body["next"].(string)
	items, _ := first.body["items"].([]any)
	if first.status != 200 || next == "" || len(items) != 1 {
		t.Fatalf("first page: %s", first.raw)
	}
	second := do(t, h, "GET", "/api/messages?stage=dev&limit=1&cursor="+url.QueryEscape(next), bearer)
	if second.status != 200 || second.body["next"] != "" {
		t.Fatalf("second page: %s", second.raw)
	}
	if db.queries[len(db.queries)-1].ExclusiveStartKey == nil {
		t.Fatal("second page did not continue from the cursor")
	}
	n := len(db.queries)
	tampered := []byte(next)
	tampered[len(tampered)/2] ^= 0x02
	for name, target := range map[string]string{
		"tampered":        "/api/messages?stage=dev&limit=1&cursor=" + url.QueryEscape(string(tampered)),
		"truncated":       "/api/messages?stage=dev&limit=1&cursor=" + url.QueryEscape(next[:len(next)-3]),
		"other parameter": "/api/messages?stage=prod&limit=1&cursor=" + url.QueryEscape(next),
		"other endpoint":  "/api/executions?agent=a&cursor=" + url.QueryEscape(next),
	} {
		r := do(t, h, "GET", target, bearer)
		if r.status != 400 || r.errorCode() != "bad_cursor" {
			t.Errorf("%s cursor: %d %s", name, r.status, r.raw)
		}
	}
	if len(db.queries) != n {
		t.Fatal("a bad cursor reached DynamoDB")
	}
	if r := do(t, h, "GET", "/api/messages?stage=dev&limit=51", bearer); r.status != 400 || r.errorField("message") != "limit: must be at most 50" {
		t.Fatalf("configured page limit: %s", r.raw)
	}
}

func TestRelativeWindowsUseTheClock(t *testing.T) {
	db := &fakeDB{}
	h := newHandler(t, db, nil)
	if r := do(t, h, "GET", "/api/jobs?installation=12345&stuckHours=6", bearer); r.status != 200 {
		t.Fatalf("stuck jobs: %s", r.raw)
	}
	q := db.queries[len(db.queries)-1]
	if aws.ToString(q.IndexName) != "GSI1" || q.ExpressionAttributeValues[":v1"].(*types.AttributeValueMemberS).Value != "in_progress" ||
		q.ExpressionAttributeValues[":v2"].(*types.AttributeValueMemberS).Value != "2030-01-15T14:00:00.000Z" {
		t.Fatalf("stuck query %s %v", aws.ToString(q.KeyConditionExpression), q.ExpressionAttributeValues)
	}
	r := do(t, h, "GET", "/api/messages/stats?stage=dev&hours=12", bearer)
	if r.status != 200 || r.body["from"] != "2030-01-15T08:00:00Z" || r.body["to"] != "2030-01-15T20:00:00Z" {
		t.Fatalf("stats window: %s", r.raw)
	}
}

func TestInternalErrorsHideDetails(t *testing.T) {
	h := newHandler(t, &fakeDB{fail: errors.New("dynamodb: secret internal detail")}, nil)
	r := do(t, h, "GET", "/api/messages?stage=dev", bearer)
	if r.status != 500 || r.errorCode() != "internal" || strings.Contains(r.raw, "secret internal detail") {
		t.Fatalf("internal error: %d %s", r.status, r.raw)
	}
}

func TestDashboardIsServedWithoutToken(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<h1>dashboard "+r.URL.Path+"</h1>")
	})
	h := newHandler(t, &fakeDB{}, func(c *Config) { c.Dashboard = dash })
	for _, p := range []string{"/", "/app.js"} {
		r := do(t, h, "GET", p, "")
		if r.status != 200 || r.raw != "<h1>dashboard "+p+"</h1>" {
			t.Fatalf("%s: %d %s", p, r.status, r.raw)
		}
	}
	if r := do(t, h, "GET", "/api/messages/x", ""); r.status != 401 {
		t.Fatalf("the API behind a dashboard still needs the token: %d", r.status)
	}
}

func TestAllowUnauthenticated(t *testing.T) {
	h := newHandler(t, &fakeDB{}, func(c *Config) { c.Token, c.AllowUnauthenticated = "", true })
	if r := do(t, h, "GET", "/api/messages?stage=dev", ""); r.status != 200 {
		t.Fatalf("unauthenticated: %d %s", r.status, r.raw)
	}
}

// TestEveryResponseCarriesTheClock: the API's clock (Config.Now) is sent on
// every response, answers, errors and the dashboard's files alike, so that
// the dashboard computes "now" on it rather than on the browser's clock.
func TestEveryResponseCarriesTheClock(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") })
	now := time.Date(2030, 1, 15, 20, 0, 0, 123_456_789, time.FixedZone("CET", 3600))
	h := newHandler(t, &fakeDB{}, func(c *Config) {
		c.Dashboard = dash
		c.Now = func() time.Time { return now }
	})
	for _, tc := range []struct {
		method, target, auth string
		status               int
	}{
		{"GET", "/api/health", "", 200},
		{"GET", "/api/vocabulary", bearer, 200},
		{"GET", "/api/jobs?installation=12345&stuckHours=6", bearer, 200},
		{"GET", "/api/vocabulary", "", 401},
		{"GET", "/api/nope", bearer, 404},
		{"POST", "/api/vocabulary", bearer, 405},
		{"GET", "/api/jobs?installation=12345&stuckHours=x", bearer, 400},
		{"GET", "/", "", 200},
	} {
		r := do(t, h, tc.method, tc.target, tc.auth)
		if r.status != tc.status {
			t.Fatalf("%s %s: status %d, want %d: %s", tc.method, tc.target, r.status, tc.status, r.raw)
		}
		if got := r.header.Get(NowHeader); got != "2030-01-15T19:00:00.123Z" {
			t.Errorf("%s %s: %s = %q, want the API's clock in UTC with milliseconds", tc.method, tc.target, NowHeader, got)
		}
	}
}
