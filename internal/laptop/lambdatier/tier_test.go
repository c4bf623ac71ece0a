package lambdatier

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/runtimeapi"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
	"github.com/streamfold/streamfold/schema/streamimage"
)

const (
	webhookSecret  = "lambda-tier-webhook-secret-0123456789"
	ingestToken    = "lambda-tier-ingest-token-0123456789"
	apiToken       = "lambda-tier-api-token-0123456789"
	cursorKey      = "lambda-tier-cursor-key-0123456789abcdef"
	agentMachine   = "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"
	agentExecution = "arn:aws:states:us-west-2:123:execution:my-agent-prod:abc123"
	brokenMachine  = "arn:aws:states:us-west-2:123:stateMachine:tags-fail"
)

// stack is what the functions run against: fresh tables under a new prefix
// in stage "stage" (not the default "dev", so that a lost STREAMFOLD_STAGE
// shows), a new bucket, the fake Secrets Manager and Step Functions, the
// environment Terraform sets, and the host-architecture bootstraps.
type stack struct {
	c         *awsclient.Clients
	naming    schema.Naming
	streamARN string
	bucket    string
	aws       *fakeAWS
	tf        map[string]tfFunction
	tfVars    map[string]string // the Terraform variables the tier sets
	boot      map[string]string
	local     map[string]string // test-only overrides: endpoints and keys
	// catalog replaces Terraform's ARCHIVE_CATALOG ("glue": there is no
	// Glue here) with an SQLite catalog, "sqlite:<dir>/catalog.db", which
	// the tier's archiver build keeps (PACKAGE_SQLCATALOG=1). Whatever reads
	// the archive in the tests opens the same one (openArchive).
	catalog string
	// freshCatalogs: every start of the archiver gets a new catalog (the
	// canaries, which empty the bucket before each run).
	freshCatalogs bool
}

func newStack(t *testing.T) *stack {
	t.Helper()
	c := testenv.S3Clients(t)
	dist := hostZips(t)
	s := &stack{c: c, aws: newFakeAWS(t), boot: map[string]string{}}
	var b [4]byte
	_, _ = rand.Read(b[:])
	s.naming = schema.Naming{Prefix: "lt" + hex.EncodeToString(b[:]), Stage: "stage"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := provision.Ensure(ctx, c.DynamoDB, s.naming)
	if err != nil {
		t.Fatalf("create tables: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, spec := range schema.Tables() {
			_, _ = c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(s.naming.Table(spec.Logical))})
		}
	})
	s.streamARN = testenv.EventStream(t, res)
	s.bucket = testenv.Bucket(t, c, "")
	secrets := map[string]string{"github_webhook": webhookSecret, "ingest_token": ingestToken, "api_token": apiToken, "cursor_key": cursorKey}
	arns := map[string]string{}
	for name, v := range secrets {
		arn := "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + s.naming.Prefix + "-stage/" + name + "-AbCdEf"
		arns[name] = arn
		s.aws.secrets[arn] = v
	}
	s.aws.tags[agentMachine] = schema.AgentTags
	s.aws.broken[brokenMachine] = true
	// Every variable a function also has a default for is set to another
	// value than that default, so that a variable the function does not
	// read shows in what it does (TestEnvironmentNamesMatch).
	s.tfVars = map[string]string{"prefix": s.naming.Prefix, "stage": s.naming.Stage, "sfn_payloads": "keep",
		"reconcile_window": "30h", "reconcile_heal": "true"}
	s.tf = readTerraform(t, tfValues{
		Vars:      s.tfVars,
		Bucket:    s.bucket,
		Database:  s.naming.Prefix + "_stage_archive",
		Secret:    arns,
		AccountID: "123456789012",
	})
	s.newCatalog(t)
	for _, fn := range functions {
		if _, ok := s.tf[fn]; !ok {
			t.Fatalf("terraform/lambda.tf: no function %q in local.functions", fn)
		}
		s.boot[fn] = unzip(t, filepath.Join(dist, fn+".zip"))
	}
	s.local = map[string]string{
		"STREAMFOLD_DYNAMODB_ENDPOINT":     envOr("STREAMFOLD_DYNAMODB_ENDPOINT", ""),
		"STREAMFOLD_S3_ENDPOINT":           envOr("STREAMFOLD_S3_ENDPOINT", ""),
		"STREAMFOLD_S3_ACCESS_KEY":         envOr("STREAMFOLD_S3_ACCESS_KEY", "streamfold"),
		"STREAMFOLD_S3_SECRET_KEY":         envOr("STREAMFOLD_S3_SECRET_KEY", "streamfold-secret"),
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": s.aws.URL,
		"AWS_ENDPOINT_URL_SFN":             s.aws.URL,
	}
	return s
}

// newCatalog points the archiver at a new, empty SQLite catalog.
func (s *stack) newCatalog(t *testing.T) {
	t.Helper()
	s.catalog = "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")
}

// env is a function's environment: Terraform's, then the local overrides,
// with edit applied to Terraform's part (nil: as is). ARCHIVE_CATALOG, where
// Terraform's part (edited) has it, is replaced by s.catalog: a renamed
// ARCHIVE_CATALOG stays missing.
func (s *stack) env(name string, edit func(map[string]string)) map[string]string {
	out := map[string]string{}
	for k, v := range s.tf[name].Env {
		out[k] = v
	}
	if edit != nil {
		edit(out)
	}
	if _, ok := out["ARCHIVE_CATALOG"]; ok {
		out["ARCHIVE_CATALOG"] = s.catalog
	}
	for k, v := range s.local {
		out[k] = v
	}
	return out
}

// openArchive opens the archive as Terraform configures the archiver (its
// bucket, prefix and namespace), in the tier's catalog; the caller closes it.
func (s *stack) openArchive(t *testing.T) *archiver.Archive {
	t.Helper()
	env := s.tf["archiver"].Env
	a, err := archiver.New(s.c.S3, archiver.Config{Bucket: env["ARCHIVE_BUCKET"], Prefix: env["ARCHIVE_PREFIX"],
		Catalog: s.catalog, Namespace: env["ARCHIVE_NAMESPACE"]})
	if err != nil {
		t.Fatalf("open the archive (catalog %s, namespace %s): %v", s.catalog, env["ARCHIVE_NAMESPACE"], err)
	}
	return a
}

// archivedEvents are the ids of the events in the archive's tables.
func (s *stack) archivedEvents(t *testing.T) ([]string, error) {
	t.Helper()
	a := s.openArchive(t)
	defer a.Close()
	var ids []string
	err := a.Events(context.Background(), func(e schema.Event) error {
		ids = append(ids, e.ID)
		return nil
	})
	return ids, err
}

// start starts a function with Terraform's environment (edited by edit).
func (s *stack) start(t *testing.T, name string, edit func(map[string]string)) (*function, error) {
	t.Helper()
	if name == "archiver" && s.freshCatalogs {
		s.newCatalog(t)
	}
	tf := s.tf[name]
	return startFunction(t, name, s.boot[name], tf.Memory, time.Duration(tf.Timeout)*time.Second, s.env(name, edit))
}

func (s *stack) mustStart(t *testing.T, name string) *function {
	t.Helper()
	fn, err := s.start(t, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// urlRequest is a function URL request (payload format 2.0) from the
// template fixture: method, path, headers, cookies and a base64 body.
func urlRequest(t *testing.T, method, path string, headers map[string]string, cookies []string, body []byte) []byte {
	t.Helper()
	var req events.LambdaFunctionURLRequest
	if err := json.Unmarshal(readFile(t, "testdata/function_url_eventbridge.json"), &req); err != nil {
		t.Fatal(err)
	}
	h := map[string]string{}
	for k, v := range req.Headers {
		if k != "authorization" && k != "content-type" {
			h[k] = v
		}
	}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	req.Headers = h
	req.Cookies = cookies
	req.RawPath, req.RequestContext.HTTP.Method, req.RequestContext.HTTP.Path = path, method, path
	req.RawQueryString = ""
	if i := strings.IndexByte(path, '?'); i >= 0 {
		req.RawPath, req.RequestContext.HTTP.Path, req.RawQueryString = path[:i], path[:i], path[i+1:]
	}
	req.RequestContext.RequestID = newUUID()
	req.RequestContext.TimeEpoch = time.Now().UnixMilli()
	req.Body, req.IsBase64Encoded = "", false
	if body != nil {
		req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func webhookRequest(t *testing.T, secret string) []byte {
	t.Helper()
	b := readFile(t, "testdata/workflow_job_queued.json")
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(b)
	return urlRequest(t, http.MethodPost, "/webhooks/github", map[string]string{
		"content-type":        "application/json",
		"user-agent":          "GitHub-Hookshot/a1b2c3d",
		"x-github-event":      "workflow_job",
		"x-github-delivery":   newUUID(),
		"x-github-hook-id":    "123456",
		"x-hub-signature-256": "sha256=" + hex.EncodeToString(m.Sum(nil)),
	}, nil, b)
}

// cloudEventRequest posts the structured CloudEvent fixture under a new id.
func cloudEventRequest(t *testing.T, token, id string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(readFile(t, "testdata/cloudevent_message_created.json"), &ev); err != nil {
		t.Fatal(err)
	}
	ev["id"] = id
	b, _ := json.Marshal(ev)
	h := map[string]string{"content-type": "application/cloudevents+json; charset=utf-8"}
	if token != "" {
		h["authorization"] = "Bearer " + token
	}
	return urlRequest(t, http.MethodPost, "/events", h, []string{"session=abc; Path=/", "theme=dark"}, b)
}

func expectStatus(t *testing.T, what string, res runtimeapi.Result, want int) string {
	t.Helper()
	r, err := httpResult(res)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if r.StatusCode != want {
		t.Fatalf("%s: status %d, want %d: %s", what, r.StatusCode, want, body(r))
	}
	return body(r)
}

// readStream reads the event table's stream until it has at least want
// records (DynamoDB Local), in the event source mapping's record shape.
func (s *stack) readStream(t *testing.T, want int) []events.DynamoDBEventRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []events.DynamoDBEventRecord
	for ctx.Err() == nil {
		out = out[:0]
		d, err := s.c.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.streamARN)})
		if err != nil {
			t.Fatalf("DescribeStream: %v", err)
		}
		for _, sh := range d.StreamDescription.Shards {
			it, err := s.c.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(s.streamARN),
				ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
			if err != nil {
				t.Fatalf("GetShardIterator: %v", err)
			}
			iter := it.ShardIterator
			for empty := 0; iter != nil && empty < 3; {
				page, err := s.c.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
				if err != nil {
					t.Fatalf("GetRecords: %v", err)
				}
				for _, r := range page.Records {
					lr, err := streamimage.LambdaRecord(r, s.streamARN, "us-east-1")
					if err != nil {
						t.Fatalf("convert record: %v", err)
					}
					out = append(out, lr)
				}
				if len(page.Records) == 0 {
					empty++
				}
				iter = page.NextShardIterator
			}
		}
		if len(out) >= want {
			return out
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("stream: %d records, want %d", len(out), want)
	return nil
}

// withPoisonAndTTL is the batch plus a poison INSERT (data that is not
// JSON) and a TTL REMOVE, with sequence numbers after the batch's.
func withPoisonAndTTL(recs []events.DynamoDBEventRecord) (batch []events.DynamoDBEventRecord, poisonID string) {
	last := recs[len(recs)-1]
	poison := last
	poison.EventID = "poison-" + newUUID()
	poison.Change.SequenceNumber = last.Change.SequenceNumber + "1"
	img := map[string]events.DynamoDBAttributeValue{}
	for k, v := range last.Change.NewImage {
		img[k] = v
	}
	img["id"] = events.NewStringAttribute("01POISON0000000000000000000")
	img["data"] = events.NewStringAttribute("{not json")
	poison.Change.NewImage = img
	poison.Change.Keys = map[string]events.DynamoDBAttributeValue{"subject": img["subject"], "id": img["id"]}

	ttl := recs[0]
	ttl.EventID = "ttl-" + newUUID()
	ttl.EventName = "REMOVE"
	ttl.Change.SequenceNumber = last.Change.SequenceNumber + "2"
	ttl.Change.OldImage, ttl.Change.NewImage = recs[0].Change.NewImage, nil
	ttl.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	return append(append(append([]events.DynamoDBEventRecord(nil), recs...), poison), ttl), poison.EventID
}

// stepFunctionsEvent is the seed 002 EventBridge event for another
// execution (name) of the agent state machine, with an input (a JSON
// string, as EventBridge sends it).
func stepFunctionsEvent(t *testing.T, name, input string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(readFile(t, "testdata/seed002_running.json"), &ev); err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:states:us-west-2:123:execution:my-agent-prod:" + name
	ev["id"] = newUUID()
	ev["resources"] = []string{arn}
	d := ev["detail"].(map[string]any)
	d["executionArn"], d["name"], d["input"] = arn, name, input
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func streamEvent(t *testing.T, recs []events.DynamoDBEventRecord) []byte {
	t.Helper()
	b, err := json.Marshal(events.DynamoDBEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *stack) scan(t *testing.T, logical string) []string {
	t.Helper()
	out, err := s.c.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.naming.Table(logical))})
	if err != nil {
		t.Fatalf("scan %s: %v", logical, err)
	}
	var items []string
	for _, it := range out.Items {
		b, _ := json.Marshal(it)
		items = append(items, string(b))
	}
	return items
}

func (s *stack) objects(t *testing.T, prefix string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.c.S3, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list %s: %v", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

func (s *stack) deleteObjects(t *testing.T, keys []string) {
	t.Helper()
	if len(keys) == 0 {
		return
	}
	var ids []s3types.ObjectIdentifier
	for _, k := range keys {
		ids = append(ids, s3types.ObjectIdentifier{Key: aws.String(k)})
	}
	if _, err := s.c.S3.DeleteObjects(context.Background(), &s3.DeleteObjectsInput{Bucket: aws.String(s.bucket),
		Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
		t.Fatalf("delete objects: %v", err)
	}
}

func containsAny(items []string, sub string) bool {
	for _, it := range items {
		if strings.Contains(it, sub) {
			return true
		}
	}
	return false
}

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// TestFunctions runs the five built functions end to end: ingest appends
// (function URL and EventBridge), the stream's records go to projector and
// archiver with a poison record and a TTL REMOVE, the api reads the
// projections, reconcile finds nothing missing; then handler errors and
// timeouts.
func TestFunctions(t *testing.T) {
	skipWithoutServices(t)
	s := newStack(t)
	ingest := s.mustStart(t, "ingest")

	t.Run("ingest/function URL", func(t *testing.T) {
		out := expectStatus(t, "signed webhook", ingest.invoke(t, webhookRequest(t, webhookSecret)), http.StatusAccepted)
		if !strings.Contains(out, "accepted") {
			t.Errorf("webhook answer %s", out)
		}
		expectStatus(t, "webhook signed with another secret", ingest.invoke(t, webhookRequest(t, "not-the-secret-0123456789")), http.StatusUnauthorized)
		out = expectStatus(t, "CloudEvent", ingest.invoke(t, cloudEventRequest(t, ingestToken, "lambda-tier-created")), http.StatusAccepted)
		if !strings.Contains(out, `"id":"lambda-tier-created"`) {
			t.Errorf("CloudEvent answer %s", out)
		}
		expectStatus(t, "CloudEvent without the token", ingest.invoke(t, cloudEventRequest(t, "", "lambda-tier-no-token")), http.StatusUnauthorized)
	})

	t.Run("ingest/EventBridge", func(t *testing.T) {
		res := ingest.invoke(t, readFile(t, "testdata/seed002_running.json"))
		if res.Error != nil {
			t.Fatalf("Step Functions event: %v; logs:\n%s", res.Error, ingest.logs)
		}
		if !strings.Contains(string(res.Response), `"outcome":"appended"`) {
			t.Errorf("Step Functions event: %s", res.Response)
		}
	})

	stored := s.scan(t, schema.TableEvents)
	if len(stored) != 3 {
		t.Fatalf("event table: %d items after the webhook, the CloudEvent and the Step Functions event, want 3:\n%s", len(stored), strings.Join(stored, "\n"))
	}
	recs := s.readStream(t, 3)
	batch, poisonID := withPoisonAndTTL(recs)

	t.Run("projector", func(t *testing.T) {
		fn := s.mustStart(t, "projector")
		resp, err := batchResult(fn.invoke(t, streamEvent(t, batch)))
		if err != nil {
			t.Fatalf("%v; logs:\n%s", err, fn.logs)
		}
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("batchItemFailures %+v, want none (the poison record is dead-lettered); logs:\n%s", resp.BatchItemFailures, fn.logs)
		}
		// The batch log line counts the TTL REMOVE and the poison record.
		if !fn.waitLog(`"message":"batch"`, `"ttl_removes":1`, `"poison":1`) {
			t.Errorf("no batch log line with ttl_removes 1 and poison 1; logs:\n%s", fn.logs)
		}
		if dl := s.scan(t, schema.TableDeadLetters); !containsAny(dl, poisonID) {
			t.Errorf("dead letters %q: none for the poison record %s", dl, poisonID)
		}
		if ex := s.scan(t, schema.TableExecutions); !containsAny(ex, "my-agent-prod") {
			t.Errorf("executions %q: the Step Functions execution is not projected", ex)
		}
		if jobs := s.scan(t, schema.TableWorkflowJobs); len(jobs) == 0 {
			t.Error("workflow jobs: the webhook's job is not projected")
		}
	})

	t.Run("archiver", func(t *testing.T) {
		fn := s.mustStart(t, "archiver")
		resp, err := batchResult(fn.invoke(t, streamEvent(t, batch)))
		if err != nil {
			t.Fatalf("%v; logs:\n%s", err, fn.logs)
		}
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("batchItemFailures %+v, want none; logs:\n%s", resp.BatchItemFailures, fn.logs)
		}
		if !fn.waitLog(`"message":"batch"`, `"ttl_removes":1`, `"poison":1`) {
			t.Errorf("no batch log line with ttl_removes 1 and poison 1; logs:\n%s", fn.logs)
		}
		prefix := s.tf["archiver"].Env["ARCHIVE_PREFIX"] + "/"
		keys := s.objects(t, prefix)
		var data, errs int
		for _, k := range keys {
			switch {
			case strings.HasPrefix(k, prefix+"errors/"):
				errs++
			case strings.HasSuffix(k, ".parquet"):
				data++
			}
		}
		if data == 0 || errs != 1 {
			t.Errorf("objects under %s: %q, want Parquet data and one poison record under errors/", prefix, keys)
		}
		// Through the catalog, in the namespace Terraform names: the
		// batch's three events (not the poison record, not the REMOVE).
		ids, err := s.archivedEvents(t)
		if err != nil || len(ids) != 3 {
			t.Errorf("archived events %q (%v), want the batch's 3 through catalog %s namespace %s", ids, err, s.catalog, s.tf["archiver"].Env["ARCHIVE_NAMESPACE"])
		}
	})

	t.Run("api/function URL", func(t *testing.T) {
		fn := s.mustStart(t, "api")
		auth := map[string]string{"authorization": "Bearer " + apiToken, "accept": "application/json"}
		out := expectStatus(t, "executions", fn.invoke(t, urlRequest(t, http.MethodGet, "/api/executions/"+agentExecution, auth, []string{"session=abc"}, nil)), http.StatusOK)
		if !strings.Contains(out, "RUNNING") {
			t.Errorf("execution: %s, want the projected execution, RUNNING", out)
		}
		out = expectStatus(t, "jobs", fn.invoke(t, urlRequest(t, http.MethodGet, "/api/jobs?installation=12345&status=queued", auth, nil, nil)), http.StatusOK)
		if !strings.Contains(out, "31275968012") {
			t.Errorf("jobs: %s, want the webhook's job 31275968012", out)
		}
		expectStatus(t, "executions without the token", fn.invoke(t, urlRequest(t, http.MethodGet, "/api/executions", nil, nil, nil)), http.StatusUnauthorized)
		expectStatus(t, "health", fn.invoke(t, urlRequest(t, http.MethodGet, "/api/health", nil, nil, nil)), http.StatusOK)
		if out := expectStatus(t, "dashboard", fn.invoke(t, urlRequest(t, http.MethodGet, "/", nil, nil, nil)), http.StatusOK); !strings.Contains(strings.ToLower(out), "<html") {
			t.Errorf("dashboard: %.200s", out)
		}
	})

	t.Run("archiver/maintenance", func(t *testing.T) {
		// What EventBridge Scheduler sends (terraform/maintenance.tf):
		// verify recomputes the counters from the archive and compares
		// them with the tables Terraform names to the function.
		fn := s.mustStart(t, "archiver")
		res := fn.invoke(t, []byte(`{"maintenance":{"task":"verify"}}`))
		if res.Error != nil {
			t.Fatalf("verify: %v; logs:\n%s", res.Error, fn.logs)
		}
		var out struct {
			Task        string `json:"task"`
			Differences *int   `json:"differences"`
			Events      int    `json:"events"`
		}
		if err := json.Unmarshal(res.Response, &out); err != nil || out.Task != "verify" || out.Differences == nil {
			t.Fatalf("verify: %s (%v), want {\"task\":\"verify\",\"differences\":N}", res.Response, err)
		}
		if *out.Differences != 0 || out.Events != 3 {
			t.Errorf("verify: %s, want no difference over the 3 archived events", res.Response)
		}
		if !fn.waitLog("VerifyDifferences") {
			t.Errorf("no VerifyDifferences metric (EMF) in the logs:\n%s", fn.logs)
		}
		res = fn.invoke(t, []byte(`{"maintenance":{"task":"compact"}}`))
		if res.Error != nil || !strings.Contains(string(res.Response), `"task":"compact"`) {
			t.Fatalf("compact: %s %v; logs:\n%s", res.Response, res.Error, fn.logs)
		}
	})

	t.Run("reconcile", func(t *testing.T) {
		// What EventBridge Scheduler sends (terraform/reconcile.tf), with
		// a window that ends after the events (the default end is now less
		// the settle time): the three events were projected and archived
		// above, so nothing is missing.
		fn := s.mustStart(t, "reconcile")
		to := time.Now().UTC().Add(time.Minute).Format(time.RFC3339)
		res := fn.invoke(t, []byte(`{"since":"1h","to":"`+to+`","heal":false}`))
		if res.Error != nil {
			t.Fatalf("reconcile: %v; logs:\n%s", res.Error, fn.logs)
		}
		var out struct {
			Events int  `json:"events"`
			Gaps   *int `json:"gaps"`
			Heal   bool `json:"heal"`
		}
		if err := json.Unmarshal(res.Response, &out); err != nil || out.Gaps == nil {
			t.Fatalf("reconcile: %s (%v), want a result with its gaps", res.Response, err)
		}
		if *out.Gaps != 0 || out.Events != 3 || out.Heal {
			t.Errorf("reconcile: %s, want no gap over the 3 events, no heal", res.Response)
		}
		if !fn.waitLog(`"ReconcileGaps":0`) {
			t.Errorf("no ReconcileGaps metric (EMF) in the logs:\n%s", fn.logs)
		}
	})

	t.Run("handler error", func(t *testing.T) {
		// A Step Functions event whose state machine's tags cannot be
		// read: a transient failure, returned so that Lambda retries.
		var ev map[string]any
		if err := json.Unmarshal(readFile(t, "testdata/seed002_running.json"), &ev); err != nil {
			t.Fatal(err)
		}
		ev["detail"].(map[string]any)["stateMachineArn"] = brokenMachine
		b, _ := json.Marshal(ev)
		res := ingest.invoke(t, b)
		if res.Error == nil || res.Response != nil || res.TimedOut {
			t.Fatalf("result %+v, want an error through /error", res)
		}
		if res.Error.Type == "" || !strings.Contains(res.Error.Message, "tags-fail") {
			t.Errorf("error %+v, want a type and a message naming the state machine", res.Error)
		}
		// The function goes on serving.
		expectStatus(t, "after the error", ingest.invoke(t, cloudEventRequest(t, ingestToken, "lambda-tier-after-error")), http.StatusAccepted)
	})

	t.Run("timeout", func(t *testing.T) {
		fn := s.mustStart(t, "projector")
		res := fn.invokeWithin(t, streamEvent(t, batch), 0) // the deadline has passed on arrival
		if !res.TimedOut || res.Error == nil || res.Error.Type != runtimeapi.ErrorTypeTimeout || res.Response != nil {
			t.Fatalf("result %+v, want a timeout", res)
		}
		if !strings.Contains(res.Error.Message, "Task timed out after") {
			t.Errorf("message %q", res.Error.Message)
		}
	})
}

// TestWrongWiringIsCaught: a zip whose bootstrap serves another handler
// fails the tier's checks of the event it should take.
func TestWrongWiringIsCaught(t *testing.T) {
	skipWithoutServices(t)
	s := newStack(t)
	// The event source mapping's shape, from schema/streamimage's fixture.
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(readFile(t, filepath.Join(repoRoot(t), "schema", "streamimage", "testdata", "lambda_event.json")), &ev); err != nil {
		t.Fatal(err)
	}
	recs := ev.Records

	t.Run("projector given a function URL request", func(t *testing.T) {
		// As if api's zip held the projector: the api check must fail.
		fn, err := startFunction(t, "api", s.boot["projector"], s.tf["api"].Memory, 15*time.Second, s.env("projector", nil))
		if err != nil {
			t.Fatal(err)
		}
		res := fn.invoke(t, urlRequest(t, http.MethodGet, "/api/health", nil, nil, nil))
		if r, err := httpResult(res); err == nil {
			t.Fatalf("httpResult accepted %+v from the projector", r)
		} else {
			t.Logf("caught: %v", err)
		}
	})
	t.Run("api given a stream batch", func(t *testing.T) {
		fn, err := startFunction(t, "projector", s.boot["api"], s.tf["projector"].Memory, 15*time.Second, s.env("api", nil))
		if err != nil {
			t.Fatal(err)
		}
		res := fn.invoke(t, streamEvent(t, recs))
		if r, err := batchResult(res); err == nil {
			t.Fatalf("batchResult accepted %+v from the api", r)
		} else {
			t.Logf("caught: %v", err)
		}
	})
	t.Run("ingest given a stream batch", func(t *testing.T) {
		fn := s.mustStart(t, "ingest")
		res := fn.invoke(t, streamEvent(t, recs))
		if res.Error == nil || !strings.Contains(res.Error.Message, "unrecognized invocation") {
			t.Fatalf("result %+v (error %v), want the unrecognized invocation through /error", res, res.Error)
		}
	})
}

// canary is one invocation that shows a function works with its
// environment: it returns errNotGood (wrapped, with why) otherwise.
type canary func(t *testing.T, s *stack, fn *function) error

var canaries = map[string]canary{
	"projector": func(t *testing.T, s *stack, fn *function) error {
		recs := s.readStream(t, 1)
		resp, err := batchResult(fn.invoke(t, streamEvent(t, recs)))
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotGood, err)
		case len(resp.BatchItemFailures) != 0:
			return fmt.Errorf("%w: batchItemFailures %+v", errNotGood, resp.BatchItemFailures)
		}
		return nil
	},
	"archiver": func(t *testing.T, s *stack, fn *function) error {
		prefix := s.tf["archiver"].Env["ARCHIVE_PREFIX"] + "/"
		s.deleteObjects(t, s.objects(t, ""))
		resp, err := batchResult(fn.invoke(t, streamEvent(t, s.readStream(t, 1))))
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotGood, err)
		case len(resp.BatchItemFailures) != 0:
			return fmt.Errorf("%w: batchItemFailures %+v", errNotGood, resp.BatchItemFailures)
		}
		if keys := s.objects(t, prefix); len(keys) == 0 {
			return fmt.Errorf("%w: no object under %s (all: %q)", errNotGood, prefix, s.objects(t, ""))
		}
		// The tables are in the namespace Terraform names (the Glue
		// database in AWS); the catalog is new for this start.
		if ids, err := s.archivedEvents(t); err != nil || len(ids) == 0 {
			return fmt.Errorf("%w: no archived event in namespace %s of the catalog (%v)", errNotGood, s.tf["archiver"].Env["ARCHIVE_NAMESPACE"], err)
		}
		// MinIO ignores x-amz-expected-bucket-owner, so the owner is
		// checked where the function states its configuration.
		if owner := s.tf["archiver"].Env["ARCHIVE_BUCKET_OWNER"]; !strings.Contains(fn.logs.String(), `"expected_bucket_owner":"`+owner+`"`) {
			return fmt.Errorf("%w: the archiver does not expect the bucket owner %s: %.500s", errNotGood, owner, fn.logs.String())
		}
		return nil
	},
	"ingest": func(t *testing.T, s *stack, fn *function) error {
		r, err := httpResult(fn.invoke(t, cloudEventRequest(t, ingestToken, "canary-"+newUUID())))
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotGood, err)
		case r.StatusCode != http.StatusAccepted:
			return fmt.Errorf("%w: status %d: %s", errNotGood, r.StatusCode, body(r))
		}
		// A Step Functions execution with an input: kept verbatim, as
		// the tier's sfn_payloads ("keep", not the function's default)
		// asks.
		marker := "lambda-tier-marker-" + newUUID()
		res := fn.invoke(t, stepFunctionsEvent(t, "canary-"+newUUID(), `{"prompt":"`+marker+`"}`))
		if res.Error != nil {
			return fmt.Errorf("%w: Step Functions event: %v", errNotGood, res.Error)
		}
		if !containsAny(s.scan(t, schema.TableEvents), marker) {
			return fmt.Errorf("%w: the execution's input is not kept verbatim (sfn_payloads = %q): %s", errNotGood, s.tfVars["sfn_payloads"], res.Response)
		}
		return nil
	},
	"reconcile": func(t *testing.T, s *stack, fn *function) error {
		// {}: the environment's window (the tier's reconcile_window, 30h,
		// not the function's 26h default) and heal (reconcile_heal, true
		// here, false by default). Gaps are not errors (the other
		// canaries append events nobody projects).
		if s.freshCatalogs {
			// The archiver's canaries left tables in S3 whose catalogs
			// (one per start) are not this one: a reader refuses those
			// (ErrUnregisteredTable). Reconcile an empty archive instead.
			s.deleteObjects(t, s.objects(t, ""))
		}
		res := fn.invoke(t, []byte(`{}`))
		if res.Error != nil {
			return fmt.Errorf("%w: %v", errNotGood, res.Error)
		}
		var out struct {
			From time.Time `json:"from"`
			Heal bool      `json:"heal"`
			Gaps *int      `json:"gaps"`
		}
		if err := json.Unmarshal(res.Response, &out); err != nil || out.Gaps == nil {
			return fmt.Errorf("%w: response %s (%v)", errNotGood, res.Response, err)
		}
		if back := time.Since(out.From); back < 29*time.Hour || back > 31*time.Hour {
			return fmt.Errorf("%w: the window starts %s back, want reconcile_window = %s", errNotGood, back, s.tfVars["reconcile_window"])
		}
		if !out.Heal {
			return fmt.Errorf("%w: no heal, want reconcile_heal = %s", errNotGood, s.tfVars["reconcile_heal"])
		}
		// The tables and the archive it reads, where it states them: MinIO
		// ignores the expected bucket owner, and a run with gaps anyway
		// cannot tell the prefix or the namespace it was given.
		env := s.tf["reconcile"].Env
		for _, want := range []string{
			`"tables":"` + s.naming.Prefix + `-stage"`,
			`"bucket":"` + env["ARCHIVE_BUCKET"] + `"`,
			`"archive_prefix":"` + env["ARCHIVE_PREFIX"] + `"`,
			`"expected_bucket_owner":"` + env["ARCHIVE_BUCKET_OWNER"] + `"`,
			`"namespace":"` + env["ARCHIVE_NAMESPACE"] + `"`,
		} {
			if !strings.Contains(fn.logs.String(), want) {
				return fmt.Errorf("%w: the configuration logged lacks %s: %.600s", errNotGood, want, fn.logs.String())
			}
		}
		return nil
	},
	"api": func(t *testing.T, s *stack, fn *function) error {
		r, err := httpResult(fn.invoke(t, urlRequest(t, http.MethodGet, "/api/jobs?installation=12345&status=queued", map[string]string{"authorization": "Bearer " + apiToken}, nil, nil)))
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", errNotGood, err)
		case r.StatusCode != http.StatusOK:
			return fmt.Errorf("%w: status %d: %s", errNotGood, r.StatusCode, body(r))
		}
		return nil
	},
}

// TestEnvironmentNamesMatch starts each function with each variable
// Terraform sets renamed: the function must fail its init or its canary
// invocation. With every variable as Terraform sets it, the canary passes.
func TestEnvironmentNamesMatch(t *testing.T) {
	skipWithoutServices(t)
	s := newStack(t)
	s.freshCatalogs = true // the archiver's canary empties the bucket
	// Something in the stream for the stream consumers' canaries.
	ing := s.mustStart(t, "ingest")
	expectStatus(t, "seed event", ing.invoke(t, cloudEventRequest(t, ingestToken, "env-seed")), http.StatusAccepted)
	for _, name := range functions {
		t.Run(name, func(t *testing.T) {
			check := canaries[name]
			fn := s.mustStart(t, name)
			if err := check(t, s, fn); err != nil {
				t.Fatalf("with Terraform's environment: %v; logs:\n%s", err, fn.logs)
			}
			fn.stop()
			for k := range s.tf[name].Env {
				t.Run(k+" renamed", func(t *testing.T) {
					fn, err := s.start(t, name, func(env map[string]string) {
						env[k+"_RENAMED"] = env[k]
						delete(env, k)
					})
					if err != nil {
						t.Logf("caught at init: %.300s", err)
						return
					}
					defer fn.stop()
					if err := check(t, s, fn); err == nil {
						t.Fatalf("%s works without %s: Terraform sets a variable it does not read", name, k)
					} else {
						t.Logf("caught: %.300s", err)
					}
				})
			}
		})
	}
}
