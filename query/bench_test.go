package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
)

// The read-side benchmark: p50/p99 latency of the main queries against
// DynamoDB Local holding 10^5 projected items, and DynamoDB requests per
// page at 10^3 and 10^5 items (which must not grow). Run it with
//
//	go test ./query -run '^$' -bench . -benchtime 200x
//
// Loading 10^5 items takes a minute or so; it happens only here, never in
// the normal test run.

// benchSet is one loaded table set and the parameters its queries use.
type benchSet struct {
	q            *Client
	agents       []string
	installation int64
	jobs         [][2]int64 // (installation, job id) of existing jobs
	dates        []string
	items        int
}

var (
	benchOnce sync.Once
	benchSets map[int]*benchSet
	benchErr  error
)

// benchItems generates n realistic projection items in the shapes the folds
// write (agent executions, jobs, messages, sf/ldf executions and albums,
// daily metrics rows), spread over 30 days.
func benchItems(n int, seed uint64) (map[string][]map[string]types.AttributeValue, *benchSet) {
	r := rand.New(rand.NewPCG(seed, 7))
	S := func(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
	N := func(n int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
	}
	B := func(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }
	start := time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)
	at := func() time.Time { return start.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))) }
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)
	}
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	set := &benchSet{agents: []string{"research-agent", "sql-agent", "code-review-agent", "support-triage-agent", "web-research-agent"}, installation: 12345}
	out := map[string][]map[string]types.AttributeValue{}
	add := func(table string, it map[string]types.AttributeValue) { out[table] = append(out[table], it) }
	metricsDays := 30
	for i := 0; len(out[schema.TableExecutions])+len(out[schema.TableWorkflowJobs])+len(out[schema.TableMessages])+len(out[schema.TableWorkflows]) < n-2*metricsDays; i++ {
		t := at()
		switch i % 10 {
		case 0, 1, 2: // a GitHub job
			inst := []int64{12345, 67890, 24601}[r.IntN(3)]
			job := int64(100000 + i)
			status := pick("completed", "completed", "completed", "in_progress", "queued")
			repo := pick("acme/api", "acme/web", "acme/infra", "globex/platform", "initech/billing")
			it := map[string]types.AttributeValue{
				"pk": S(strconv.FormatInt(inst, 10) + "#" + strconv.FormatInt(job, 10)), "sk": S("v"),
				"installation_id": N(inst), "job_id": N(job), "run_id": N(int64(50000 + i/4)), "run_attempt": N(1),
				"org_name": S("acme"), "repo_full_name": S(repo), "repo_is_private": B(true), "workflow_name": S("CI"),
				"job_name": S(pick("build", "test", "lint", "deploy")), "head_sha": S(fmt.Sprintf("%040x", r.Uint64())),
				"head_branch": S("main"), "default_branch": S("main"), "job_html_url": S("https://github.com/" + repo + "/actions/runs/1/job/" + strconv.FormatInt(job, 10)),
				"status": S(status), "created_at": S(schema.FormatItemTime(t)), "received_at": S(schema.FormatItemTime(t.Add(time.Second))),
				"labels":          &types.AttributeValueMemberL{Value: []types.AttributeValue{S("runs-on"), S("pool=small-x64")}},
				"was_interrupted": B(false), "instance_type": S("m7i.large"), "instance_lifecycle": S(pick("spot", "on-demand")),
				"last_updated_at": S(schema.FormatItemTime(t.Add(5 * time.Minute))), "ttl": N(t.AddDate(0, 0, 90).Unix()),
			}
			if status == "completed" {
				it["conclusion"] = S(pick("success", "success", "success", "failure", "cancelled"))
				it["started_at"] = S(schema.FormatItemTime(t.Add(20 * time.Second)))
				it["completed_at"] = S(schema.FormatItemTime(t.Add(time.Duration(60+r.IntN(600)) * time.Second)))
			}
			add(schema.TableWorkflowJobs, it)
			if inst == set.installation && len(set.jobs) < 1000 {
				set.jobs = append(set.jobs, [2]int64{inst, job})
			}
		case 3, 4, 5: // a rez_agent message
			stage, status := pick("dev", "stage", "prod"), pick("completed", "completed", "completed", "failed", "processing", "queued", "created")
			it := map[string]types.AttributeValue{
				"message_id": S(uuid()), "created_date": S(schema.FormatItemTime(t)), "created_by": S("scheduler"), "stage": S(stage),
				"message_type": S(pick("scheduled_hello", "manual_notification")), "status": S(status),
				"payload": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"text": S("hello world"), "priority": S("default"),
					"tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{S("scheduled"), S("daily")}}}},
				"updated_date": S(schema.FormatItemTime(t.Add(15 * time.Second))), "retry_count": N(0), "correlation_id": S(uuid()),
				"ttl": N(t.AddDate(0, 0, 90).Unix()),
			}
			add(schema.TableMessages, it)
		case 6, 7: // an agent execution
			agent := set.agents[r.IntN(len(set.agents))]
			name := uuid()
			status := pick("SUCCEEDED", "SUCCEEDED", "SUCCEEDED", "FAILED", "RUNNING", "TIMED_OUT")
			it := map[string]types.AttributeValue{
				"executionArn": S("arn:aws:states:us-east-1:123456789012:execution:" + agent + "-prod:" + name), "agentName": S(agent),
				"startDate": S(schema.FormatItemTime(t)), "status": S(status), "executionName": S(name),
				"stateMachineArn": S("arn:aws:states:us-east-1:123456789012:stateMachine:" + agent + "-prod"),
				"indexedAt":       S(schema.FormatItemTime(t.Add(time.Minute))),
			}
			if status != "RUNNING" {
				d := int64(5 + r.IntN(600))
				it["stopDate"], it["durationSeconds"] = S(schema.FormatItemTime(t.Add(time.Duration(d)*time.Second))), N(d)
			}
			add(schema.TableExecutions, it)
		default: // an sf/ldf execution with two albums
			wt, id := pick(StepFunctions, DurableFunctions), uuid()
			add(schema.TableWorkflows, map[string]types.AttributeValue{
				"pk": S(id), "sk": S("metadata"), "entityType": S("execution"), "workflowType": S(wt), "executionId": S(id), "sortValue": N(0),
				"imageS3Key": S("uploads/" + id + ".jpg"), "status": S(pick("completed", "completed", "failed", "running")),
				"createdAt": S(schema.FormatItemTime(t)), "updatedAt": S(schema.FormatItemTime(t.Add(time.Minute))),
			})
			for a := int64(1); a <= 2; a++ {
				add(schema.TableWorkflows, map[string]types.AttributeValue{
					"pk": S(id), "sk": S("album-" + strconv.FormatInt(a, 10)), "entityType": S("album"), "workflowType": S(wt), "executionId": S(id),
					"albumIndex": N(a), "sortValue": N(a), "albumName": S("Abbey Road"), "artist": S("The Beatles"), "year": N(1969),
					"createdAt": S(schema.FormatItemTime(t)), "updatedAt": S(schema.FormatItemTime(t.Add(time.Minute))),
				})
			}
		}
	}
	for d := 0; d < metricsDays; d++ {
		date := start.AddDate(0, 0, d).Format("2006-01-02")
		set.dates = append(set.dates, date)
		for _, wt := range WorkflowTypes {
			add(schema.TableWorkflows, map[string]types.AttributeValue{
				"pk": S(date), "sk": S("metrics-" + wt), "entityType": S("metrics"), "workflowType": S(wt), "date": S(date),
				"period": S("daily"), "status": S("daily"), "createdAt": S(date + "T00:00:00.000Z"),
				"executionCount": N(int64(20 + r.IntN(20))), "successCount": N(18), "failureCount": N(2), "durationSumMs": N(900000),
				"durationCount": N(20), "totalCost": &types.AttributeValueMemberN{Value: "0.12"}, "avgDurationMs": N(45000),
				"avgCostPerExecution": &types.AttributeValueMemberN{Value: "0.006"},
			})
		}
	}
	for _, items := range out {
		set.items += len(items)
	}
	return out, set
}

// batchLoad writes items with BatchWriteItem, 25 per request, 16 in flight.
func batchLoad(ctx context.Context, db *dynamodb.Client, n schema.Naming, items map[string][]map[string]types.AttributeValue) error {
	type batch struct {
		table string
		items []map[string]types.AttributeValue
	}
	ch := make(chan batch)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range ch {
				reqs := make([]types.WriteRequest, len(b.items))
				for i, it := range b.items {
					reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
				}
				pending := map[string][]types.WriteRequest{n.Table(b.table): reqs}
				for attempt := 0; len(pending) > 0; attempt++ {
					if attempt > 20 {
						errs <- fmt.Errorf("batch write: unprocessed items after %d attempts", attempt)
						return
					}
					out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
					if err != nil {
						errs <- err
						return
					}
					pending = out.UnprocessedItems
					if len(pending) > 0 {
						time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
					}
				}
			}
		}()
	}
	tables := make([]string, 0, len(items))
	for t := range items {
		tables = append(tables, t)
	}
	slices.Sort(tables)
loop:
	for _, t := range tables {
		for i := 0; i < len(items[t]); i += 25 {
			select {
			case ch <- batch{t, items[t][i:min(i+25, len(items[t]))]}:
			case err := <-errs:
				errs <- err
				break loop
			}
		}
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func loadBenchSets(b *testing.B, c *awsclient.Clients) map[int]*benchSet {
	benchOnce.Do(func() {
		benchSets = map[int]*benchSet{}
		for _, size := range []int{1_000, 100_000} {
			n, _ := testenv.SharedTables(b, c)
			items, set := benchItems(size, uint64(size))
			start := time.Now()
			if benchErr = batchLoad(context.Background(), c.DynamoDB, n, items); benchErr != nil {
				return
			}
			b.Logf("loaded %d items in %v", set.items, time.Since(start).Round(time.Millisecond))
			if set.q, benchErr = New(c.DynamoDB, n, Config{CursorKey: testKey}); benchErr != nil {
				return
			}
			benchSets[size] = set
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchSets
}

// benchQueries are the main queries, each taking an iteration number so
// that parameters vary between iterations.
var benchQueries = []struct {
	name  string
	paged bool
	run   func(ctx context.Context, s *benchSet, i int, p PageRequest) (Page, error)
}{
	{"executions-by-agent", true, func(ctx context.Context, s *benchSet, i int, p PageRequest) (Page, error) {
		return s.q.ExecutionsByAgent(ctx, s.agents[i%len(s.agents)], TimeRange{}, p)
	}},
	{"messages-by-stage", true, func(ctx context.Context, s *benchSet, i int, p PageRequest) (Page, error) {
		return s.q.Messages(ctx, MessageFilter{Stage: schema.Stages[i%3]}, p)
	}},
	{"jobs-by-status", true, func(ctx context.Context, s *benchSet, i int, p PageRequest) (Page, error) {
		return s.q.JobsByStatus(ctx, s.installation, []string{"completed", "in_progress", "queued"}[i%3], time.Time{}, p)
	}},
	{"metrics-compare", false, func(ctx context.Context, s *benchSet, i int, _ PageRequest) (Page, error) {
		_, err := s.q.CompareMetrics(ctx, s.dates[i%len(s.dates)])
		return Page{}, err
	}},
	{"job-by-id", false, func(ctx context.Context, s *benchSet, i int, _ PageRequest) (Page, error) {
		j := s.jobs[i%len(s.jobs)]
		_, err := s.q.Job(ctx, j[0], j[1])
		return Page{}, err
	}},
}

func BenchmarkQueries(b *testing.B) {
	c := testenv.Clients(b)
	sets := loadBenchSets(b, c)
	ctx := context.Background()
	perPage := map[string]map[int]float64{}
	for _, bq := range benchQueries {
		perPage[bq.name] = map[int]float64{}
		for _, size := range []int{1_000, 100_000} {
			s := sets[size]
			b.Run(fmt.Sprintf("%s/items=%d", bq.name, s.items), func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				before := s.q.Stats()
				pages := 0
				for i := 0; b.Loop(); i++ {
					p := PageRequest{}
					t0 := time.Now()
					page, err := bq.run(ctx, s, i, p)
					lat = append(lat, time.Since(t0))
					if err != nil {
						b.Fatal(err)
					}
					pages++
					if bq.paged && page.Next != "" && i%2 == 1 {
						// Every other iteration also fetches the second page,
						// so that pages after a cursor are counted too.
						t0 = time.Now()
						if _, err := bq.run(ctx, s, i, PageRequest{Cursor: page.Next}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
						pages++
					}
				}
				reqs := float64(s.q.Stats().Sub(before).Requests) / float64(pages)
				perPage[bq.name][size] = reqs
				slices.Sort(lat)
				pct := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
				}
				b.ReportMetric(pct(0.50), "p50-ms")
				b.ReportMetric(pct(0.99), "p99-ms")
				b.ReportMetric(reqs, "requests/page")
			})
		}
	}
	for name, bySize := range perPage {
		small, large := bySize[1_000], bySize[100_000]
		if small > 0 && large > small {
			b.Errorf("%s: %.2f requests per page at 10^5 items, %.2f at 10^3: it grows with the table", name, large, small)
		}
	}
}
