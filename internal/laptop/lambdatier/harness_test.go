package lambdatier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/internal/laptop/runtimeapi"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
)

// skipWithoutServices skips (or, with STREAMFOLD_REQUIRE_SERVICES=1, fails)
// a test when DynamoDB Local or MinIO is not configured: the tier builds
// four binaries, which is not worth doing when it cannot run them.
func skipWithoutServices(t *testing.T) {
	t.Helper()
	testenv.S3Clients(t)
}

// fakeAWS serves the two AWS APIs the functions call besides DynamoDB and
// S3, in their JSON protocols: Secrets Manager GetSecretValue (awsJson1_1)
// and Step Functions ListTagsForResource (awsJson1_0). The functions reach it
// through AWS_ENDPOINT_URL_SECRETS_MANAGER and AWS_ENDPOINT_URL_SFN.
type fakeAWS struct {
	URL string

	mu      sync.Mutex
	secrets map[string]string            // by ARN
	tags    map[string]map[string]string // by state machine ARN
	broken  map[string]bool              // state machine ARNs whose tags fail (500)
	calls   map[string]int               // by X-Amz-Target
}

func newFakeAWS(t *testing.T) *fakeAWS {
	t.Helper()
	f := &fakeAWS{secrets: map[string]string{}, tags: map[string]map[string]string{}, broken: map[string]bool{}, calls: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	f.URL = "http://" + ln.Addr().String()
	return f
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	var in map[string]string
	_ = json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[target]++
	reply := func(ct string, code int, v any) {
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch target {
	case "secretsmanager.GetSecretValue":
		const ct = "application/x-amz-json-1.1"
		v, ok := f.secrets[in["SecretId"]]
		if !ok {
			reply(ct, http.StatusBadRequest, map[string]string{"__type": "ResourceNotFoundException", "message": "Secrets Manager can't find the specified secret."})
			return
		}
		reply(ct, http.StatusOK, map[string]any{"ARN": in["SecretId"], "Name": in["SecretId"][strings.LastIndexByte(in["SecretId"], ':')+1:],
			"SecretString": v, "VersionId": "00000000-0000-0000-0000-000000000001", "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7e9})
	case "AWSStepFunctions.ListTagsForResource":
		const ct = "application/x-amz-json-1.0"
		arn := in["resourceArn"]
		if f.broken[arn] {
			reply(ct, http.StatusInternalServerError, map[string]string{"__type": "InternalFailure", "message": "the fake is told to fail for " + arn})
			return
		}
		tags, ok := f.tags[arn]
		if !ok {
			reply(ct, http.StatusBadRequest, map[string]string{"__type": "ResourceNotFound", "message": "Resource not found: " + arn})
			return
		}
		var list []map[string]string
		for k, v := range tags {
			list = append(list, map[string]string{"key": k, "value": v})
		}
		reply(ct, http.StatusOK, map[string]any{"tags": list})
	default:
		reply("application/json", http.StatusBadRequest, map[string]string{"__type": "UnknownOperationException", "message": "the tier's fake does not serve " + target})
	}
}

// function is one running bootstrap: a process and its Runtime API.
type function struct {
	name    string
	srv     *runtimeapi.Server
	cmd     *exec.Cmd
	logs    *testenv.SyncBuffer
	exited  chan struct{}
	timeout time.Duration
}

// lambdaEnv is the environment of a function as Lambda gives it: the
// variables Lambda itself sets (reserved names: region, credentials,
// function name, memory, log group, the Runtime API address), then env.
// Nothing is inherited from the test's own environment.
func lambdaEnv(name string, memory int, runtimeAPI, taskRoot string, env map[string]string) []string {
	out := []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=" + taskRoot,
		"LAMBDA_RUNTIME_DIR=/var/runtime",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=us-east-1",
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", memory),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME=2026/01/01/[$LATEST]0123456789abcdef",
		"AWS_LAMBDA_LOG_FORMAT=JSON", // logging_config { log_format = "JSON" }
		"AWS_ACCESS_KEY_ID=ASIALOCALTESTKEY0000",
		"AWS_SECRET_ACCESS_KEY=local-test-secret",
		"AWS_SESSION_TOKEN=local-test-session",
		"AWS_EC2_METADATA_DISABLED=true",
		"TZ=:UTC",
		"LANG=en_US.UTF-8",
		"PATH=/usr/local/bin:/usr/bin/:/bin",
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

// startFunction starts bootstrap with the environment and waits for its
// init: the first poll of /next. An init that fails (the process exits, or
// posts to /init/error) or takes over 10 s (Lambda's init limit) is an
// error carrying the function's logs.
func startFunction(t *testing.T, name, bootstrap string, memory int, timeout time.Duration, env map[string]string) (*function, error) {
	t.Helper()
	srv, err := runtimeapi.New()
	if err != nil {
		t.Fatal(err)
	}
	fn := &function{name: name, srv: srv, logs: &testenv.SyncBuffer{}, exited: make(chan struct{}), timeout: timeout}
	fn.cmd = exec.Command(bootstrap)
	fn.cmd.Dir = filepath.Dir(bootstrap)
	fn.cmd.Env = lambdaEnv(name, memory, srv.Addr(), filepath.Dir(bootstrap), env)
	fn.cmd.Stdout, fn.cmd.Stderr = fn.logs, fn.logs
	if err := fn.cmd.Start(); err != nil {
		_ = srv.Close()
		t.Fatalf("%s: start bootstrap: %v", name, err)
	}
	go func() {
		err := fn.cmd.Wait()
		srv.Exited(err)
		close(fn.exited)
	}()
	t.Cleanup(fn.stop)
	select {
	case <-srv.Polled():
		return fn, nil
	case <-fn.exited:
		return nil, fmt.Errorf("%s: init failed: %s: Runtime exited: %v; logs:\n%s", name, runtimeapi.ErrorTypeExit, fn.cmd.ProcessState, fn.logs)
	case <-srv.InitFailed():
		return nil, fmt.Errorf("%s: init failed: %v; logs:\n%s", name, srv.InitError(), fn.logs)
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("%s: init did not finish in 10 s; logs:\n%s", name, fn.logs)
	}
}

func (fn *function) stop() {
	if fn.cmd.Process != nil {
		select {
		case <-fn.exited:
		default:
			_ = fn.cmd.Process.Kill()
			<-fn.exited
		}
	}
	_ = fn.srv.Close()
}

// waitLog waits (up to 2 s: the process's output is copied by a goroutine)
// for a log line holding every one of subs, and reports whether one came.
func (fn *function) waitLog(subs ...string) bool {
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(fn.logs.String(), "\n") {
			ok := true
			for _, sub := range subs {
				ok = ok && strings.Contains(line, sub)
			}
			if ok {
				return true
			}
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// invoke sends one event with the function's timeout.
func (fn *function) invoke(t *testing.T, payload []byte) runtimeapi.Result {
	t.Helper()
	return fn.invokeWithin(t, payload, fn.timeout)
}

func (fn *function) invokeWithin(t *testing.T, payload []byte, timeout time.Duration) runtimeapi.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	res, err := fn.srv.Invoke(ctx, runtimeapi.Invocation{Payload: payload, Timeout: timeout,
		FunctionARN: "arn:aws:lambda:us-east-1:123456789012:function:" + fn.name})
	if err != nil {
		t.Fatalf("%s: invoke: %v; logs:\n%s", fn.name, err, fn.logs)
	}
	return res
}

// httpResult is the function URL response of an invocation, or an error
// when the invocation failed or its result is not a function URL response
// (no statusCode: the function is wired to another handler).
func httpResult(res runtimeapi.Result) (events.LambdaFunctionURLResponse, error) {
	var out events.LambdaFunctionURLResponse
	if res.Error != nil {
		return out, fmt.Errorf("invocation failed: %w", res.Error)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(res.Response, &probe); err != nil {
		return out, fmt.Errorf("response %q: not a JSON object: %w", res.Response, err)
	}
	if _, ok := probe["statusCode"]; !ok {
		return out, fmt.Errorf("response %q: no statusCode: not a function URL response", res.Response)
	}
	if err := json.Unmarshal(res.Response, &out); err != nil {
		return out, fmt.Errorf("response %q: %w", res.Response, err)
	}
	return out, nil
}

// body decodes a function URL response's body (base64 when flagged).
func body(r events.LambdaFunctionURLResponse) string {
	if r.IsBase64Encoded {
		b, err := decodeB64(r.Body)
		if err != nil {
			return "<bad base64: " + err.Error() + ">"
		}
		return string(b)
	}
	return r.Body
}

// batchResult is the partial batch response of a stream invocation, or an
// error when the invocation failed or its result is not exactly
// {"batchItemFailures": [...]} (the function is wired to another handler).
func batchResult(res runtimeapi.Result) (events.DynamoDBEventResponse, error) {
	var out events.DynamoDBEventResponse
	if res.Error != nil {
		return out, fmt.Errorf("invocation failed: %w", res.Error)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(res.Response, &probe); err != nil {
		return out, fmt.Errorf("response %q: not a JSON object: %w", res.Response, err)
	}
	for k := range probe {
		if k != "batchItemFailures" {
			return out, fmt.Errorf("response %q: field %q: not a partial batch response", res.Response, k)
		}
	}
	if _, ok := probe["batchItemFailures"]; !ok {
		return out, fmt.Errorf("response %q: no batchItemFailures: not a partial batch response", res.Response)
	}
	if err := json.Unmarshal(res.Response, &out); err != nil {
		return out, fmt.Errorf("response %q: %w", res.Response, err)
	}
	return out, nil
}

var errNotGood = errors.New("not the expected outcome")

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
