package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"maps"
	"math/big"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/ingest"
	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/streamrun"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/reconcile"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/toolkit/localrun"
)

// TestReconcileFaults makes both consumers miss records in each way a
// consumer misses them that can be reproduced locally, one phase after
// the other on the same tables and archive (a checkpoint moved past unread
// records is TestReconcileFindsAndHealsGaps):
//
//   - latest: the consumers restart without checkpoints at LATEST (run
//     --starting-position latest) after records were appended;
//   - discarded: a handler fails some records until their retries are
//     exhausted (MaxRetryAttempts 1), and they go to the dead-letter table
//     (OnPoison, as run does);
//   - filtered: a filter drops every record of one type (each consumer
//     another type), reporting success, as an event source mapping's
//     filter criteria do.
//
// After each, reconcile over the phase's window reports as missing from
// the archive exactly the records the archiver missed, and as missing
// from the projections only records the projector missed (an event whose
// effect another event already brought is applied in effect: after the
// heal, the projections equal the fold of the event table, so every
// missed event whose effect was missing was reported). --heal heals all of
// them; then the projections equal the fold of the event table, the
// archive holds exactly the table's events, a second reconcile finds
// nothing (exit 0) and verify finds no difference.
func TestReconcileFaults(t *testing.T) {
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	bucket := testenv.Bucket(t, c, n.BucketName())
	stream := testenv.EventStream(t, res)
	env := localEnv(n)
	ctx := context.Background()

	t.Run("latest", func(t *testing.T) {
		from := time.Now().UTC().Add(-time.Second)
		appendSimulated(t, c, n, 61, 200, 2)
		missed := tableKeys(t, c, n, from, time.Now().UTC().Add(time.Second))
		since := time.Now().UTC().Add(-time.Minute)
		// Both consumers start at LATEST: what the stream holds is skipped.
		stop := runCLIBackground(env, "run", "--quiet", "--starting-position", "latest", "--archive-batch-window", "0s")
		waitFor(t, "both consumers to start at LATEST (their gap records)", func() bool {
			gaps, err := (&opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}).Gaps(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, g := range gaps {
				if g.Kind == opsrec.GapLatest {
					got[g.Consumer] = true
				}
			}
			return got["projector"] && got["archiver"]
		})
		appendSimulated(t, c, n, 62, 100, 2)
		waitFor(t, "both consumers to checkpoint what was appended after their start", func() bool {
			return checkpointed(t, c, n, stream, "projector") && checkpointed(t, c, n, stream, "archiver")
		})
		if code, out, errOut := stop(); code != exitOK {
			t.Fatalf("run --starting-position latest: exit %d\n%s\n%s", code, out, errOut)
		}
		runCaughtUp(t, env)
		checkReconcile(t, c, n, bucket, env, from, time.Now().UTC().Add(time.Second), missed, missed)
	})

	t.Run("discarded", func(t *testing.T) {
		from := time.Now().UTC().Add(-time.Second)
		appendSimulated(t, c, n, 63, 300, 2)
		var projFailed, archFailed keySet
		runWrapped(t, c, n, bucket, 1, map[string]func(streamrun.Handler) streamrun.Handler{
			"projector": func(h streamrun.Handler) streamrun.Handler { return failSome(h, 0, &projFailed) },
			"archiver":  func(h streamrun.Handler) streamrun.Handler { return failSome(h, 1, &archFailed) },
		})
		if projFailed.len() == 0 || archFailed.len() == 0 {
			t.Fatalf("failed %d records for the projector, %d for the archiver: want some for each", projFailed.len(), archFailed.len())
		}
		// Each went to the dead-letter table after its retries.
		for consumer, failed := range map[string]*keySet{"projector": &projFailed, "archiver": &archFailed} {
			letters, err := projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters)).List(ctx, consumer)
			if err != nil {
				t.Fatal(err)
			}
			if len(letters) != failed.len() {
				t.Errorf("%s: %d dead letters, want the %d records discarded", consumer, len(letters), failed.len())
			}
		}
		checkReconcile(t, c, n, bucket, env, from, time.Now().UTC().Add(time.Second), projFailed.keys(), archFailed.keys())
	})

	t.Run("filtered", func(t *testing.T) {
		from := time.Now().UTC().Add(-time.Second)
		appendSimulated(t, c, n, 64, 300, 2)
		var projDropped, archDropped keySet
		runWrapped(t, c, n, bucket, 3, map[string]func(streamrun.Handler) streamrun.Handler{
			"projector": func(h streamrun.Handler) streamrun.Handler { return dropType(h, "rez.message.created", &projDropped) },
			"archiver": func(h streamrun.Handler) streamrun.Handler {
				return dropType(h, "github.workflow_job.queued", &archDropped)
			},
		})
		if projDropped.len() == 0 || archDropped.len() == 0 {
			t.Fatalf("dropped %d records for the projector, %d for the archiver: want some for each", projDropped.len(), archDropped.len())
		}
		checkReconcile(t, c, n, bucket, env, from, time.Now().UTC().Add(time.Second), projDropped.keys(), archDropped.keys())
	})
}

// checkReconcile runs reconcile over [from, to) and asserts what
// TestReconcileFaults says of each phase: projLost and archLost are the
// records (subject NUL id) the projector and the archiver missed.
func checkReconcile(t *testing.T, c *awsclient.Clients, n schema.Naming, bucket string, env map[string]string, from, to time.Time, projLost, archLost map[string]bool) {
	t.Helper()
	window := []string{"--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano)}
	rep := reconcileJSON(t, env, exitFailed, window...)
	if got := gapKeys(rep, reconcile.KindArchive); keysDiff(got, archLost) != keysDiff(archLost, archLost) {
		t.Errorf("missing archive: %s", keysDiff(got, archLost))
	}
	gotProj := gapKeys(rep, reconcile.KindProjection)
	for k := range gotProj {
		if !projLost[k] {
			t.Errorf("missing projection %q: the projector did not miss it", strings.ReplaceAll(k, "\x00", "/"))
		}
	}
	if len(gotProj) == 0 || len(gotProj) < len(projLost)/2 {
		t.Errorf("%d missing from the projections of %d records missed: want most (an event whose effect another already brought is applied in effect)", len(gotProj), len(projLost))
	}
	if cf := gapKeys(rep, reconcile.KindConflict); len(cf) != 0 {
		t.Errorf("conflicts %v, want none", cf)
	}
	t.Logf("%d events in the window; the projector missed %d (%d reported: the others applied in effect), the archiver %d", rep.Events, len(projLost), len(gotProj), len(archLost))

	healed := reconcileJSON(t, env, exitOK, append(window, "--heal")...)
	n0 := 0
	for _, g := range healed.IDs {
		if g.Healed {
			n0++
		}
	}
	if n0 != len(rep.IDs) || healed.Gaps() != 0 {
		t.Errorf("heal: %d of %d gaps healed, %d remaining", n0, len(rep.IDs), healed.Gaps())
	}
	if again := reconcileJSON(t, env, exitOK, window...); len(again.IDs) != 0 || again.Events != rep.Events {
		t.Errorf("after heal: %d gap ids, %d events (first run %d)", len(again.IDs), again.Events, rep.Events)
	}
	if code, out, errOut := runCLI(t, env, "", "verify", "--quiet"); code != exitOK {
		t.Errorf("verify after heal: exit %d\n%s\n%s", code, out, errOut)
	}
	assertProjectionsAreTheFold(t, c, n)
	assertArchiveIsTheTable(t, c, n, bucket)
}

// runCaughtUp runs both consumers (streamfold run) until caught up.
func runCaughtUp(t *testing.T, env map[string]string) {
	t.Helper()
	if code, out, errOut := runCLI(t, env, "", "run", "--until-caught-up", "--quiet", "--archive-batch-window", "0s"); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
}

// runCLIBackground starts the CLI; stop cancels it and returns how it
// ended.
func runCLIBackground(env map[string]string, args ...string) (stop func() (code int, stdout, stderr string)) {
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	e := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() { done <- run(ctx, e, args) }()
	return func() (int, string, string) {
		cancel()
		code := <-done
		return code, out.String(), errb.String()
	}
}

// waitFor polls cond until it holds. The bound only keeps a broken test
// from hanging; nothing is asserted of the time taken.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitProgress(t, what, cond, func() string { return "" })
}

// waitProgress waits until cond holds, giving up only when progress (a
// rendering of how far the awaited work has got) has not changed for 10
// minutes: a loaded machine makes the work slower, never the test fail,
// while a stalled consumer still fails it.
func waitProgress(t *testing.T, what string, cond func() bool, progress func() string) {
	t.Helper()
	const stall = 10 * time.Minute
	last, since := progress(), time.Now()
	for !cond() {
		time.Sleep(100 * time.Millisecond)
		if p := progress(); p != last {
			last, since = p, time.Now()
			continue
		}
		if time.Since(since) > stall {
			t.Fatalf("gave up waiting for %s: no progress for %s (at %q)", what, stall, last)
		}
	}
}

// checkpointed reports whether consumer has a checkpoint on every open
// shard of stream.
func checkpointed(t *testing.T, c *awsclient.Clients, n schema.Naming, stream, consumer string) bool {
	t.Helper()
	ctx := context.Background()
	desc, err := c.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(stream)})
	if err != nil {
		t.Fatal(err)
	}
	cps := streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints))
	for _, sh := range desc.StreamDescription.Shards {
		if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
			continue
		}
		if _, ok, err := cps.Get(ctx, consumer, aws.ToString(sh.ShardId)); err != nil {
			t.Fatal(err)
		} else if !ok {
			return false
		}
	}
	return true
}

// runWrapped runs the projector and the archiver as run does (the same
// handlers, dead letters and OnPoison), each handler wrapped by wrap of
// its consumer, with maxRetries, until caught up.
func runWrapped(t *testing.T, c *awsclient.Clients, n schema.Naming, bucket string, maxRetries int, wrap map[string]func(streamrun.Handler) streamrun.Handler) {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	stack, err := localrun.NewProjector(ctx, c.DynamoDB, n, projector.Config{}, "projector", nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]streamrun.Handler{"projector": stack.Handler.Handle, "archiver": localrun.StopOnPermanent(archiver.NewHandler(a, log).Process)}
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	for consumer, h := range handlers {
		cfg := streamrun.Config{
			StreamARN: stack.StreamARN, Consumer: consumer, BatchSize: 100, MaxRetryAttempts: maxRetries, UntilCaughtUp: true,
			Ops: opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}, Logger: log,
			OnPoison: projector.NewDeadLetters(c.DynamoDB, n.Table(schema.TableDeadLetters)).OnPoison(consumer),
		}
		r, err := streamrun.New(c.Streams, streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints)), wrap[consumer](h), cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.Run(ctx)
			mu.Lock()
			errs[consumer] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	for consumer, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", consumer, err)
		}
	}
}

// keySet is a set of event keys (subject NUL id), safe for concurrent use.
type keySet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *keySet) add(k string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	s.m[k] = true
}

func (s *keySet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *keySet) keys() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for k := range s.m {
		out[k] = true
	}
	return out
}

func recAttr(rec events.DynamoDBEventRecord, name string) string {
	if v, ok := rec.Change.NewImage[name]; ok && v.DataType() == events.DataTypeString {
		return v.String()
	}
	return ""
}

func recKey(rec events.DynamoDBEventRecord) string {
	return recAttr(rec, schema.AttrSubject) + "\x00" + recAttr(rec, schema.AttrID)
}

// failSome fails every record whose id hashes to class (of 7), whatever
// the attempt, as a record that keeps failing does: the records before it
// in the batch go to h, then it is reported as the batch's failure
// (ReportBatchItemFailures). Each failed record's key is added to failed.
func failSome(h streamrun.Handler, class uint32, failed *keySet) streamrun.Handler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for i, rec := range ev.Records {
			f := fnv.New32a()
			f.Write([]byte(recAttr(rec, schema.AttrID)))
			if f.Sum32()%7 != class {
				continue
			}
			failed.add(recKey(rec))
			if i > 0 {
				resp, err := h(ctx, events.DynamoDBEvent{Records: ev.Records[:i]})
				if err != nil || len(resp.BatchItemFailures) > 0 {
					return resp, err
				}
			}
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: rec.Change.SequenceNumber}}}, nil
		}
		return h(ctx, ev)
	}
}

// dropType is an event source mapping's filter that drops the records of
// one event type: they never reach h, and the batch succeeds. Each
// dropped record's key is added to dropped.
func dropType(h streamrun.Handler, eventType string, dropped *keySet) streamrun.Handler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var keep []events.DynamoDBEventRecord
		for _, rec := range ev.Records {
			if recAttr(rec, schema.AttrEventType) == eventType {
				dropped.add(recKey(rec))
				continue
			}
			keep = append(keep, rec)
		}
		if len(keep) == 0 {
			return events.DynamoDBEventResponse{}, nil
		}
		return h(ctx, events.DynamoDBEvent{Records: keep})
	}
}

// scanTable reads every item of a table, strongly consistent.
func scanTable(t *testing.T, c *awsclient.Clients, table string) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Items...)
	}
	return out
}

// tableEvents decodes every event of the event table.
func tableEvents(t *testing.T, c *awsclient.Clients, n schema.Naming) []schema.Event {
	t.Helper()
	var out []schema.Event
	for _, it := range scanTable(t, c, n.Table(schema.TableEvents)) {
		ev, err := schema.EventFromItem(it)
		if err != nil {
			t.Fatalf("event table item %v: %v", it, err)
		}
		out = append(out, ev)
	}
	return out
}

// tableKeys are the keys of the event table's events recorded in [from, to).
func tableKeys(t *testing.T, c *awsclient.Clients, n schema.Naming, from, to time.Time) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, ev := range tableEvents(t, c, n) {
		if ev.RecordedAt != nil && !ev.RecordedAt.Before(from) && ev.RecordedAt.Before(to) {
			out[ev.Subject+"\x00"+ev.ID] = true
		}
	}
	return out
}

// assertProjectionsAreTheFold folds every event of the event table into a
// fresh in-memory store and asserts that every projection table holds
// exactly its items, attribute by attribute (the projector's bookkeeping
// attributes aside).
func assertProjectionsAreTheFold(t *testing.T, c *awsclient.Clients, n schema.Naming) {
	t.Helper()
	mem := projector.NewMemStore()
	p, err := projector.New(mem, projector.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []projector.Input
	for _, ev := range tableEvents(t, c, n) {
		in, ok, err := projector.InputOf(ev, "")
		if err == nil && ok {
			inputs = append(inputs, in)
		}
	}
	if out := p.Project(context.Background(), inputs); len(out.Failed)+len(out.Poison) > 0 {
		t.Fatalf("fold of the event table: failed %v, poison %v", out.Failed, out.Poison)
	}
	for _, table := range schema.ProjectionTables() {
		want := map[string]bool{}
		for _, it := range mem.Items(table) {
			want[canonItem(it)] = true
		}
		got := map[string]bool{}
		for _, it := range scanTable(t, c, n.Table(table)) {
			got[canonItem(it)] = true
		}
		var extra, missing []string
		for k := range got {
			if !want[k] {
				extra = append(extra, k)
			}
		}
		for k := range want {
			if !got[k] {
				missing = append(missing, k)
			}
		}
		if len(extra)+len(missing) > 0 {
			sort.Strings(extra)
			sort.Strings(missing)
			t.Errorf("%s: the projection is not the fold of the event table: %d items only in the projection %q, %d only in the fold %q",
				table, len(extra), extra[:min(3, len(extra))], len(missing), missing[:min(3, len(missing))])
		}
	}
}

// canonItem renders an item without its bookkeeping attributes and its
// zero counters, keys sorted and numbers normalised.
func canonItem(it map[string]types.AttributeValue) string {
	var b strings.Builder
	canonValue(&b, &types.AttributeValueMemberM{Value: it}, true)
	return b.String()
}

func canonValue(b *strings.Builder, v types.AttributeValue, top bool) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		fmt.Fprintf(b, "S%q", v.Value)
	case *types.AttributeValueMemberN:
		fmt.Fprintf(b, "N%s", canonNumber(v.Value))
	case *types.AttributeValueMemberBOOL:
		fmt.Fprintf(b, "BOOL%t", v.Value)
	case *types.AttributeValueMemberNULL:
		b.WriteString("NULL")
	case *types.AttributeValueMemberB:
		fmt.Fprintf(b, "B%x", v.Value)
	case *types.AttributeValueMemberSS:
		s := append([]string{}, v.Value...)
		sort.Strings(s)
		fmt.Fprintf(b, "SS%q", s)
	case *types.AttributeValueMemberNS:
		s := make([]string, len(v.Value))
		for i, x := range v.Value {
			s[i] = canonNumber(x)
		}
		sort.Strings(s)
		fmt.Fprintf(b, "NS%q", s)
	case *types.AttributeValueMemberL:
		b.WriteString("L[")
		for _, x := range v.Value {
			canonValue(b, x, false)
			b.WriteString(",")
		}
		b.WriteString("]")
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			if top && schema.IsInternalAttribute(k) {
				continue
			}
			// An absent counter counts as 0 (as verify compares): a
			// counter row keeps a counter that went back to 0, where
			// another order of the same events never wrote it.
			if n, ok := v.Value[k].(*types.AttributeValueMemberN); top && ok && canonNumber(n.Value) == "0" {
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("M{")
		for _, k := range keys {
			fmt.Fprintf(b, "%q:", k)
			canonValue(b, v.Value[k], false)
			b.WriteString(",")
		}
		b.WriteString("}")
	default:
		fmt.Fprintf(b, "%T", v)
	}
}

func canonNumber(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	return r.RatString()
}

// assertArchiveIsTheTable asserts that the archive holds exactly the event
// table's events (those the archive has a table for), with the same
// content.
func assertArchiveIsTheTable(t *testing.T, c *awsclient.Clients, n schema.Naming, bucket string) {
	t.Helper()
	want := map[string]string{}
	for _, ev := range tableEvents(t, c, n) {
		if _, ok := archiver.TableFor(ev.Type); !ok {
			continue
		}
		h, err := schema.ContentHash(ev)
		if err != nil {
			t.Fatal(err)
		}
		want[ev.Subject+"\x00"+ev.ID] = h
	}
	a, err := openTestArchive(t, c, n, bucket)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	if err := a.Events(context.Background(), func(ev schema.Event) error {
		h, err := schema.ContentHash(ev)
		got[ev.Subject+"\x00"+ev.ID] = h
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for k, h := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "not archived "+strings.ReplaceAll(k, "\x00", "/"))
		} else if g != h {
			diffs = append(diffs, "other content "+strings.ReplaceAll(k, "\x00", "/"))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "not in the table "+strings.ReplaceAll(k, "\x00", "/"))
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("archive (%d events) is not the event table (%d): %d differences, e.g. %q", len(got), len(want), len(diffs), diffs[:min(5, len(diffs))])
	}
}

// falsePositiveEvents is the size of TestReconcileNoFalsePositivesWhileRunning's
// window: STREAMFOLD_RECONCILE_EVENTS, default 2,000 (the acceptance size
// is 100,000).
func falsePositiveEvents(t *testing.T) int {
	v := os.Getenv("STREAMFOLD_RECONCILE_EVENTS")
	if v == "" {
		return 2000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("STREAMFOLD_RECONCILE_EVENTS=%q: want a positive number of events", v)
	}
	return n
}

// TestReconcileNoFalsePositivesWhileRunning: a window of events is
// appended, then streamfold run consumes the stream while events keep
// being appended, before, during and after the reconcile. Once the consumers are past the
// window's last record, reconcile over the window (its settled part: the
// events appended later are outside it) reports every event of it and no
// gap, while the consumers go on consuming what is appended meanwhile.
// STREAMFOLD_RECONCILE_EVENTS=100000 runs it at the acceptance size.
func TestReconcileNoFalsePositivesWhileRunning(t *testing.T) {
	c := testenv.S3Clients(t)
	n, res := testenv.Tables(t, c)
	testenv.Bucket(t, c, n.BucketName())
	stream := testenv.EventStream(t, res)
	env := localEnv(n)
	ctx := context.Background()
	size := falsePositiveEvents(t)

	began := time.Now()
	from := time.Now().UTC().Add(-time.Second)
	_, appended := appendSimulated(t, c, n, 71, size, 3)
	to := time.Now().UTC().Add(time.Millisecond)
	t.Logf("appended %d events in %.1fs", appended.Count(ingest.Accepted), time.Since(began).Seconds())
	lastSeq := lastWindowSeqs(t, c, stream)
	// The consumers start once the window is appended (DynamoDB Local's
	// appends slow down many times over while its stream is polled) and
	// run until the end.
	stopRun := runCLIBackground(env, "run", "--quiet", "--batch-size", "500")
	runStopped := false
	defer func() {
		if !runStopped {
			stopRun()
		}
	}()

	// More events keep coming, until the reconcile is over and at least
	// one batch was appended after it began.
	app, err := ingest.NewAppender(c.DynamoDB, ingest.AppenderConfig{Table: n.Table(schema.TableEvents)})
	if err != nil {
		t.Fatal(err)
	}
	var during atomic.Int64
	reconciling, reconciled := make(chan struct{}), make(chan struct{})
	appendErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		var afterStart bool
		for seed := int64(1000); ; seed++ {
			select {
			case <-quit:
				appendErr <- nil
				return
			case <-reconciled:
				if afterStart {
					appendErr <- nil
					return
				}
			default:
			}
			select {
			case <-reconciling:
				afterStart = true
			default:
			}
			evs, _, err := simulate.Generate(simulate.Config{Seed: seed, Events: 100, Start: testclock.RecentMonday(1), Days: 1})
			if err == nil {
				var r ingest.Result
				r, err = app.Append(ctx, evs)
				if afterStart {
					during.Add(int64(r.Count(ingest.Accepted)))
				}
			}
			if err != nil {
				appendErr <- err
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()

	waitProgress(t, "the consumers to pass the window's last record", func() bool {
		return passed(t, c, n, "projector", lastSeq) && passed(t, c, n, "archiver", lastSeq)
	}, func() string {
		return checkpointsOf(t, c, n, "projector", lastSeq) + " " + checkpointsOf(t, c, n, "archiver", lastSeq)
	})
	t.Logf("consumers past the window after %.1fs", time.Since(began).Seconds())
	close(reconciling)
	started := time.Now()
	rep := reconcileJSON(t, env, exitOK, "--from", from.Format(time.RFC3339Nano), "--to", to.Format(time.RFC3339Nano))
	took := time.Since(started)
	close(reconciled)
	if err := <-appendErr; err != nil {
		t.Fatal(err)
	}
	runStopped = true
	if code, out, errOut := stopRun(); code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if rep.Events != appended.Count(ingest.Accepted) || len(rep.IDs) != 0 || rep.Gaps() != 0 {
		t.Errorf("reconcile while running: %d events (appended %d), %d gap ids: want every event, no gap: %+v",
			rep.Events, appended.Count(ingest.Accepted), len(rep.IDs), rep.Rows)
	}
	t.Logf("reconcile of %d events while the consumers ran: %.1fs (%.0f events/s), %.0f read units (%.0f per million events); %d events appended meanwhile",
		rep.Events, took.Seconds(), float64(rep.Events)/took.Seconds(), rep.ReadUnits, rep.ReadUnits/float64(rep.Events)*1e6, during.Load())
}

// lastWindowSeqs reads every open shard of stream to its end and returns
// the sequence number of its last record (shard id -> sequence number).
func lastWindowSeqs(t *testing.T, c *awsclient.Clients, stream string) map[string]string {
	t.Helper()
	ctx := context.Background()
	desc, err := c.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(stream)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, sh := range desc.StreamDescription.Shards {
		it, err := c.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(stream), ShardId: sh.ShardId, ShardIteratorType: "TRIM_HORIZON"})
		if err != nil {
			t.Fatal(err)
		}
		for iter := it.ShardIterator; iter != nil; {
			recs, err := c.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs.Records) == 0 {
				break
			}
			out[aws.ToString(sh.ShardId)] = aws.ToString(recs.Records[len(recs.Records)-1].Dynamodb.SequenceNumber)
			iter = recs.NextShardIterator
		}
	}
	return out
}

// passed reports whether consumer's checkpoint of every shard in last is
// at or past its sequence number.
// checkpointsOf renders consumer's checkpoints on the shards of last: how
// far it has got.
func checkpointsOf(t *testing.T, c *awsclient.Clients, n schema.Naming, consumer string, last map[string]string) string {
	t.Helper()
	cps := streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints))
	var b strings.Builder
	for _, shard := range slices.Sorted(maps.Keys(last)) {
		cp, _, err := cps.Get(context.Background(), consumer, shard)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%s/%t;", shard, cp.SequenceNumber, cp.Done)
	}
	return b.String()
}

func passed(t *testing.T, c *awsclient.Clients, n schema.Naming, consumer string, last map[string]string) bool {
	t.Helper()
	cps := streamrun.NewDynamoCheckpoints(c.DynamoDB, n.Table(schema.TableCheckpoints))
	for shard, seq := range last {
		cp, ok, err := cps.Get(context.Background(), consumer, shard)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return false
		}
		if cp.Done {
			continue
		}
		have, ok1 := new(big.Int).SetString(cp.SequenceNumber, 10)
		want, ok2 := new(big.Int).SetString(seq, 10)
		if !ok1 || !ok2 || have.Cmp(want) < 0 {
			return false
		}
	}
	return true
}
