package rebuild

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/awsclient"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// dynamoView is the view of a set of DynamoDB tables: every projection
// item and every aggregate state (version ignored).
func dynamoView(t *testing.T, c *awsclient.Clients, nm schema.Naming) view {
	t.Helper()
	v := view{}
	scan := func(logical string, fn func(row)) {
		p := dynamodb.NewScanPaginator(c.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(nm.Table(logical)), ConsistentRead: aws.Bool(true)})
		for p.HasMorePages() {
			page, err := p.NextPage(context.Background())
			if err != nil {
				t.Fatalf("scan %s: %v", nm.Table(logical), err)
			}
			for _, it := range page.Items {
				fn(it)
			}
		}
	}
	for _, table := range projectionTables {
		scan(table, func(it row) { addToView(t, v, table, it) })
	}
	scan(schema.TableAggregates, func(it row) {
		v["aggregates|"+strAttr(it, "subject")] = map[string]any{"kind": strAttr(it, "kind"), "state": strAttr(it, "state")}
	})
	return v
}

func freshNaming(t *testing.T) schema.Naming {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return schema.Naming{Prefix: "t" + hex.EncodeToString(b[:]) + "-rebuilt", Stage: "dev"}
}

// TestRebuildAndVerifyDynamoDB: a workload projected as the stream would
// into tables A; rebuilt from the archive (shuffled, with duplicates) into
// fresh tables B, every projection item and aggregate state equals A's; a
// second rebuild writes nothing; the fresh target is refused once it holds
// items; Verify finds A agreeing with the archive, and after one metrics
// row's counter is changed by UpdateItem names exactly that row and
// attribute.
func TestRebuildAndVerifyDynamoDB(t *testing.T) {
	c := testenv.Clients(t)
	ctx := context.Background()
	evs := workload(t, 21, 2000, recentStart())
	src := Events(shuffledWithDuplicates(evs, 3))

	nA, _ := testenv.Tables(t, c)
	storeA, err := projector.NewDynamoStore(c.DynamoDB, nA)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	projectAsStream(t, storeA, evs, 250)
	t.Logf("stream projection of %d events into A: %v", len(evs), time.Since(began).Round(time.Millisecond))

	nB := freshNaming(t)
	res, err := PrepareFresh(ctx, c.DynamoDB, nB, false)
	if err != nil {
		t.Fatalf("prepare fresh %s: %v", nB.Prefix, err)
	}
	if len(res) != len(schema.Tables()) || !res[0].Created {
		t.Fatalf("prepare fresh created %+v, want every table", res)
	}
	storeB, err := projector.NewDynamoStore(c.DynamoDB, nB)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Rebuild(ctx, src, storeB, Options{})
	if err != nil {
		t.Fatalf("rebuild: %v (%+v)", err, st)
	}
	t.Logf("rebuild into B: %d events (%d projected, %d non-agent), %d subjects, %d commits, %d write requests, %.1fs, %.0f events/s",
		st.Events, st.Projected, st.NonAgent, st.Subjects, st.Commits, storeB.WriteRequests(), st.Seconds, st.EventsPerSecond)
	if st.Failed != 0 || st.Invalid != 0 || st.Poison != 0 || st.Projected+st.NonAgent != len(src) {
		t.Fatalf("rebuild stats %+v", st)
	}
	viewA, viewB := dynamoView(t, c, nA), dynamoView(t, c, nB)
	diffViews(t, viewA, viewB, "A (stream projection)", "B (rebuild)")
	t.Logf("items compared per table: %v", counts(viewB))
	for _, table := range append(projectionTables, schema.TableAggregates) {
		// workflow-runs holds only what older projectors left of run
		// summaries (and the empty shares of a job named in two runs): the
		// summaries, summed from the job items, are compared by Verify
		// below, which wants a non-zero count of them on both sides.
		if counts(viewB)[table] == 0 && table != schema.TableWorkflowRuns {
			t.Fatalf("B holds no %s item: the comparison would be vacuous", table)
		}
	}

	requests := storeB.WriteRequests()
	again, err := Rebuild(ctx, src, storeB, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed != 0 || again.Commits != 0 || storeB.WriteRequests() != requests {
		t.Fatalf("second rebuild %+v, write requests %d -> %d: want no change", again, requests, storeB.WriteRequests())
	}
	diffViews(t, viewB, dynamoView(t, c, nB), "B", "B after a second rebuild")

	_, err = PrepareFresh(ctx, c.DynamoDB, nB, false)
	var ne *NotEmptyError
	if !errors.Is(err, ErrTargetNotEmpty) || !errors.As(err, &ne) {
		t.Fatalf("prepare fresh on a rebuilt target: err = %v, want *NotEmptyError", err)
	}
	var wantFull []string
	for _, l := range FreshTables {
		// A rebuild writes projections, not events; workflow-runs only when
		// a job was named in two runs.
		if l != schema.TableEvents && (l != schema.TableWorkflowRuns || counts(viewB)[l] > 0) {
			wantFull = append(wantFull, nB.Table(l))
		}
	}
	if !reflect.DeepEqual(ne.Tables, wantFull) {
		t.Fatalf("not-empty tables %v, want %v", ne.Tables, wantFull)
	}
	if _, err := PrepareFresh(ctx, c.DynamoDB, nB, true); err != nil {
		t.Fatalf("prepare fresh with force: %v", err)
	}

	live, err := NewDynamoLive(c.DynamoDB, nA)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(ctx, src, live, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("verify of A: %d differences, e.g. %s", len(rep.Differences), showDiffs(rep.Differences[:min(10, len(rep.Differences))]))
	}
	for _, rc := range rep.Rows {
		if rc.Archive == 0 || rc.Archive != rc.Projection {
			t.Fatalf("rows compared %+v: want the same non-zero count on both sides", rep.Rows)
		}
	}
	t.Logf("verify: rows %+v in %.1fs", rep.Rows, rep.Archive.Seconds)

	// Change one sf/ldf metrics row's counter behind the projector's back.
	wm := kindNamed(t, KindWorkflowMetrics)
	target := sortedRows(t, live, wm)[0]
	was := target["successCount"]
	_, err = c.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(nA.Table(schema.TableWorkflows)),
		Key:                       keyOfRow(wm, target),
		UpdateExpression:          aws.String("ADD successCount :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Verify(ctx, src, live, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, key := rowKey(wm.Table, target)
	want := []Difference{{Kind: wm.Name, Table: wm.Table, Key: key, Problem: Differs, Attribute: "successCount", Archive: render(was), Projection: plus(t, was, "1")}}
	if !reflect.DeepEqual(rep.Differences, want) {
		t.Fatalf("verify after the change:\n got %s\nwant %s", showDiffs(rep.Differences), showDiffs(want))
	}
}
