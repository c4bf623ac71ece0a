package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// limitCase is one generated event at or just over one of DynamoDB's
// limits, sent through one HTTP route.
type limitCase struct {
	name  string
	path  string // ingest.PathEvents or ingest.PathEventBridge
	body  []byte
	over  bool   // just over the limit: must be refused
	field string // the field a refusal names
	// projected is the projection item an accepted event must produce.
	table string
	key   map[string]types.AttributeValue
	id    string // the event id the archive must hold
}

const limitsToken = "limits-ingest-token-0123456789"

func randHex(r *rand.Rand, n int) string {
	const hex = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[r.IntN(16)]
	}
	return string(b)
}

func randUUID(r *rand.Rand) string {
	return randHex(r, 8) + "-" + randHex(r, 4) + "-4" + randHex(r, 3) + "-a" + randHex(r, 3) + "-" + randHex(r, 12)
}

// randDigits returns n decimal digits, the first and last non-zero (so all
// n are significant).
func randDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	b[0], b[n-1] = byte('1'+r.IntN(9)), byte('1'+r.IntN(9))
	return string(b)
}

// randNested nests depth objects and arrays under random keys; path is the
// JSON path (after the value's own) of the innermost container.
func randNested(r *rand.Rand, depth int) (js string, keys []string) {
	var open, close strings.Builder
	for i := 0; i < depth; i++ {
		if r.IntN(2) == 0 {
			k := "k" + randHex(r, 3)
			keys = append(keys, "."+k)
			open.WriteString(`{"` + k + `":`)
			close.WriteString("}")
		} else {
			keys = append(keys, "[0]")
			open.WriteString("[")
			close.WriteString("]")
		}
	}
	c := close.String()
	rev := []byte(c)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return open.String() + "1" + string(rev), keys
}

// message is a structured-mode CloudEvent creating a rez_agent message
// whose payload carries extra members.
func message(r *rand.Rand, name string, over bool, field, extra string) limitCase {
	id, mid := "limits-"+randHex(r, 12), randUUID(r)
	data := fmt.Sprintf(`{"message_id":%q,"stage":"dev","created_by":"limits","message_type":"web_action","correlation_id":%q,"payload":{"text":"hi"%s}}`, mid, randUUID(r), extra)
	body := fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"rez_agent/dev","type":"rez.message.created","time":"2025-10-21T14:30:00Z","data":%s}`, id, data)
	return limitCase{name: name, path: ingest.PathEvents, body: []byte(body), over: over, field: field, id: id,
		table: schema.TableMessages, key: map[string]types.AttributeValue{"message_id": &types.AttributeValueMemberS{Value: mid}}}
}

// execution is a Step Functions status change of an agent whose execution
// ARN is arnBytes long, through /eventbridge (asEventBridge) or /events.
func execution(r *rand.Rand, name string, arnBytes int, asEventBridge bool) limitCase {
	machine := "arn:aws:states:us-east-1:123456789012:stateMachine:agent-prod"
	prefix := "arn:aws:states:us-east-1:123456789012:execution:agent-prod:"
	arn := prefix + randHex(r, arnBytes-len(prefix))
	id := "limits-" + randHex(r, 12)
	detail := fmt.Sprintf(`{"executionArn":%q,"stateMachineArn":%q,"name":"n","status":"RUNNING","startDate":1761057000000,"stateMachineTags":{"Type":"Agent","Application":"StepFunctionsAgent"}}`, arn, machine)
	c := limitCase{name: name, over: arnBytes > schema.MaxARNBytes, id: id,
		table: schema.TableExecutions, key: map[string]types.AttributeValue{"executionArn": &types.AttributeValueMemberS{Value: arn}}}
	if asEventBridge {
		c.path, c.field = ingest.PathEventBridge, "detail.executionArn"
		c.body = []byte(fmt.Sprintf(`{"version":"0","id":%q,"detail-type":"Step Functions Execution Status Change","source":"aws.states","account":"123456789012","time":"2025-10-21T14:30:00Z","region":"us-east-1","resources":[%q],"detail":%s}`, id, arn, detail))
	} else {
		c.path, c.field = ingest.PathEvents, "data.executionArn"
		c.body = []byte(fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"aws.states","type":"aws.states.execution_status_change","time":"2025-10-21T14:30:00Z","data":%s}`, id, detail))
	}
	return c
}

// runner is a RunsOn runner event whose repo_full_name (a GSI key of the
// workflow-jobs table) is repoBytes long.
func runner(r *rand.Rand, name string, repoBytes int) limitCase {
	id := "limits-" + randHex(r, 12)
	job := 1 + r.Int64N(1<<40)
	repo := "o/" + randHex(r, repoBytes-2)
	body := fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"runs-on","type":"runson.runner.scheduled","time":"2025-10-21T14:30:00Z","data":{"installation_id":7,"job_id":%d,"run_id":9,"run_attempt":1,"repo_full_name":%q,"instance_type":"m7a.large","instance_lifecycle":"spot","scheduled_at":"2025-10-21T14:30:00Z"}}`, id, job, repo)
	return limitCase{name: name, path: ingest.PathEvents, body: []byte(body), over: repoBytes > schema.MaxRepoFullNameBytes, field: "data.repo_full_name", id: id,
		table: schema.TableWorkflowJobs, key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: schema.JobKey(7, job)}, "sk": &types.AttributeValueMemberS{Value: "v"}}}
}

// limitCases generates, for each limit, events at it and just over it.
func limitCases(r *rand.Rand) []limitCase {
	var cs []limitCase
	for i := 0; i < 2; i++ {
		// Nesting: the payload is data's level 2, so a payload nesting 30
		// more levels is data at 32.
		inner, keys := randNested(r, schema.MaxNestingDepth-2)
		cs = append(cs, message(r, "nesting at the limit", false, "", `,"deep":`+inner))
		inner, keys = randNested(r, schema.MaxNestingDepth-1)
		cs = append(cs, message(r, "nesting over the limit", true, "data.payload.deep"+strings.Join(keys[:len(keys)-1], ""), `,"deep":`+inner))
		// Numbers: significant digits, then magnitude.
		d := randDigits(r, schema.MaxNumberDigits)
		cs = append(cs, message(r, "38 digits", false, "", `,"n":`+d))
		cs = append(cs, message(r, "39 digits", true, "data.payload.n", `,"n":`+d+"7"))
		cs = append(cs, message(r, "41 digits", true, "data.payload.n", `,"n":`+randDigits(r, 41)))
		m := d[:1] + "." + d[1:]
		cs = append(cs, message(r, "largest magnitude", false, "", `,"n":-`+m+"E+125"))
		cs = append(cs, message(r, "over the largest magnitude", true, "data.payload.n", `,"n":`+m+"E+126"))
		cs = append(cs, message(r, "1e200", true, "data.payload.n", `,"n":1e200`))
		cs = append(cs, message(r, "smallest magnitude", false, "", `,"n":1E-130`))
		cs = append(cs, message(r, "under the smallest magnitude", true, "data.payload.n", `,"n":`+m+"E-131"))
		// Key sizes: an execution ARN (the executions table's partition
		// key) and a repository name (a GSI key) at and over their limits;
		// an ARN over DynamoDB's own 2,048 bytes.
		cs = append(cs, execution(r, "ARN at the limit (/events)", schema.MaxARNBytes, false))
		cs = append(cs, execution(r, "ARN over the limit (/events)", schema.MaxARNBytes+1, false))
		cs = append(cs, execution(r, "ARN at the limit (/eventbridge)", schema.MaxARNBytes, true))
		cs = append(cs, execution(r, "ARN over the partition key limit (/eventbridge)", schema.MaxPartitionKeyBytes+1+r.IntN(100), true))
		cs = append(cs, runner(r, "repo at the limit", schema.MaxRepoFullNameBytes))
		cs = append(cs, runner(r, "repo over the limit", schema.MaxRepoFullNameBytes+1))
	}
	// Item size: a payload that keeps the event's item under 400 KB even
	// as incompressible text, and one whose item is over it even compressed
	// (random letters and digits compress to about 3/4).
	text := func(n int) string {
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	cs = append(cs, message(r, "item under 400 KB", false, "", `,"blob":"`+text(schema.MaxItemBytes/2)+`"`))
	cs = append(cs, message(r, "item over 400 KB", true, "", `,"blob":"`+text(3*schema.MaxItemBytes/2)+`"`))
	return cs
}

// TestLimitsThroughHTTP drives generated events at and just over each of
// DynamoDB's limits through the ingest routes (the HTTP handler with a real
// Appender on DynamoDB Local) and checks each outcome: an event over a
// limit is refused with a 4xx naming the field (413 for the item size);
// an event at a limit is accepted (202), then projected into its item by
// the projector and archived by the archiver, both reading the real
// stream, with no dead letter.
func TestLimitsThroughHTTP(t *testing.T) {
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	stream := testenv.EventStream(t, res)
	ctx := context.Background()
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ingest.NewHTTPHandler(ingest.HTTPConfig{Appender: app, WebhookSecret: ingest.StaticSecret(limitsToken), Token: ingest.StaticSecret(limitsToken), DetailTags: true, Log: testenv.QuietLog()})
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	cases := limitCases(rand.New(rand.NewPCG(seed, 20)))
	var accepted []limitCase
	for _, tc := range cases {
		req := httptest.NewRequest(http.MethodPost, tc.path, bytes.NewReader(tc.body))
		req.Header.Set("Authorization", "Bearer "+limitsToken)
		if tc.path == ingest.PathEvents {
			req.Header.Set("Content-Type", ingest.MediaTypeCloudEvent)
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out ingest.EventResult
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		switch {
		case !tc.over:
			if rec.Code != http.StatusAccepted {
				t.Errorf("%s: %d %s, want 202", tc.name, rec.Code, truncate(rec.Body.String()))
				continue
			}
			accepted = append(accepted, tc)
		case tc.field == "": // the item size
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(out.Error, "400 KB") {
				t.Errorf("%s: %d %s, want 413 naming the 400 KB limit", tc.name, rec.Code, truncate(rec.Body.String()))
			}
		default:
			named := false
			for _, f := range out.Fields {
				named = named || f.Field == tc.field && (strings.Contains(f.Rule, "at most") || strings.Contains(f.Rule, "at least"))
			}
			if rec.Code != http.StatusBadRequest || !named {
				t.Errorf("%s: %d %s, want 400 naming %s and its limit", tc.name, rec.Code, truncate(rec.Body.String()), tc.field)
			}
		}
	}
	if len(accepted) == 0 || len(accepted) == len(cases) {
		t.Fatalf("%d of %d cases accepted: the test needs both outcomes", len(accepted), len(cases))
	}

	// The accepted events are projected and archived from the stream.
	dl := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters))
	store, err := projector.NewDynamoStore(c.DynamoDB, n)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projector.New(store, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := archiver.New(c.S3, archiver.Config{Bucket: testenv.Bucket(t, c, ""), Prefix: "archive/v1", Catalog: "sqlite:" + filepath.Join(t.TempDir(), "catalog.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	for _, consumer := range []struct {
		name string
		h    streamrun.Handler
	}{{"projector", projector.NewHandler(proj, dl, projector.HandlerConfig{}, testenv.QuietLog()).Handle}, {"archiver", archiver.NewHandler(a, testenv.QuietLog()).Handle}} {
		r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints)), consumer.h, streamrun.Config{
			StreamARN: stream, Consumer: consumer.name, BatchSize: 10, UntilCaughtUp: true, MaxRetryAttempts: 2,
			PollInterval: 50 * time.Millisecond, Logger: testenv.QuietLog(), OnPoison: dl.OnPoison(consumer.name),
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithCancel(ctx) // no deadline of its own: go test -timeout bounds it (load must not fail it)
		err = r.Run(runCtx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", consumer.name, err)
		}
		if st := r.Stats(); st.Poisoned > 0 {
			t.Errorf("%s: %d records poisoned", consumer.name, st.Poisoned)
		}
	}
	for _, consumer := range []string{"projector", "archiver"} {
		letters, err := dl.List(ctx, consumer)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range letters {
			t.Errorf("%s dead letter at %s (%s): %s", consumer, d.SequenceNumber, d.Reason, d.Error)
		}
	}
	archived := map[string]bool{}
	if err := a.Events(ctx, func(e schema.Event) error { archived[e.ID] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range accepted {
		out, err := c.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(n.Table(tc.table)), Key: tc.key, ConsistentRead: aws.Bool(true)})
		if err != nil || len(out.Item) == 0 {
			t.Errorf("%s: accepted but not projected into %s (%v)", tc.name, tc.table, err)
		}
		if !archived[tc.id] {
			t.Errorf("%s: accepted but event %s not archived", tc.name, tc.id)
		}
	}
	t.Logf("%d cases: %d accepted, projected and archived; %d refused", len(cases), len(accepted), len(cases)-len(accepted))
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
