package projector_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/projector"
	"github.com/streamfold/streamfold/schema"
)

// TestRowDeltasAcrossAScaleChange: a counter applied at one scale and
// contributed at another moves by the difference of the two values, not of
// their integers (500000 micro-dollars and 500000000 nano-dollars are both
// 0.5: no delta). Deltas are taken at the larger scale, exactly.
func TestRowDeltasAcrossAScaleChange(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "2026-01-05"}, "sk": &types.AttributeValueMemberS{Value: "metrics-step-functions"}}
	c := func(v int64, scale int) []projector.Contribution {
		out := projector.Contribution{Table: schema.TableWorkflows, Key: key, Counters: map[string]int64{"executionCount": 1, "totalCost": v}}
		if scale != 0 {
			out.Scale = map[string]int{"totalCost": scale}
		}
		return []projector.Contribution{out}
	}
	for _, tc := range []struct {
		name          string
		applied, next []projector.Contribution
		want          string // the totalCost delta as a decimal; "" for no row
	}{
		{"micro to nano, same value", c(500_000, 6), c(500_000_000, 9), ""},
		{"nano to micro, same value", c(500_000_000, 9), c(500_000, 6), ""},
		{"units to nano, same value", c(2, 0), c(2_000_000_000, 9), ""},
		{"micro (rounded) to nano (exact)", c(123_457, 6), c(123_456_789, 9), "-0.000000211"},
		{"nano (exact) to micro (rounded)", c(123_456_789, 9), c(123_457, 6), "0.000000211"},
		{"same scale", c(1_500, 6), c(2_500, 6), "0.001"},
		{"counter gone", c(500_000, 6), []projector.Contribution{{Table: schema.TableWorkflows, Key: key, Counters: map[string]int64{"executionCount": 1}}}, "-0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := projector.RowDeltasCheckedForTest(tc.applied, tc.applied, tc.next)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("deltas = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("deltas = %+v, want one row", got)
			}
			if d := projector.NormalizeNumber(projector.FormatScaled(got[0].Counters["totalCost"], got[0].Scale["totalCost"])); d != tc.want {
				t.Fatalf("totalCost delta = %s (%d at scale %d), want %s", d, got[0].Counters["totalCost"], got[0].Scale["totalCost"], tc.want)
			}
		})
	}
	t.Run("out of range is an error, not a wrapped value", func(t *testing.T) {
		_, err := projector.RowDeltasCheckedForTest(c(math.MaxInt64/100, 0), nil, c(1, 9))
		if !errors.Is(err, projector.ErrCounterRange) {
			t.Fatalf("err = %v, want ErrCounterRange", err)
		}
	})
}

// TestMergeRowDeltaAcrossScales: deltas of one row from aggregates folded
// under different scales (a batch straddling a deploy) add as values.
func TestMergeRowDeltaAcrossScales(t *testing.T) {
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "2026-01-05"}, "sk": &types.AttributeValueMemberS{Value: "metrics-step-functions"}}
	var acc projector.Contribution
	for _, d := range []projector.Contribution{
		{Table: schema.TableWorkflows, Key: key, Counters: map[string]int64{"totalCost": 500_000}, Scale: map[string]int{"totalCost": 6}},
		{Table: schema.TableWorkflows, Key: key, Counters: map[string]int64{"totalCost": 500_000_000}, Scale: map[string]int{"totalCost": 9}},
		{Table: schema.TableWorkflows, Key: key, Counters: map[string]int64{"totalCost": 1}, Scale: map[string]int{"totalCost": 6}},
	} {
		if err := projector.MergeRowDeltaCheckedForTest(&acc, d); err != nil {
			t.Fatal(err)
		}
	}
	if got := projector.FormatScaled(acc.Counters["totalCost"], acc.Scale["totalCost"]); got != "1.000001000" {
		t.Fatalf("merged totalCost = %s, want 1.000001000", got)
	}
	row, err := projector.NextRowForTest(schema.TableWorkflows, nil, acc)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := row["totalCost"].(*types.AttributeValueMemberN); n == nil || n.Value != "1.000001" {
		t.Fatalf("row totalCost = %v, want 1.000001", row["totalCost"])
	}
}

// atScale is a contributions hook that renders totalCost at scale (6:
// micro-dollars, rounded half away from zero, as the projector once did; 9:
// nano-dollars, as it does now).
func atScale(scale int) func(projector.Aggregate, []projector.Contribution) []projector.Contribution {
	return func(_ projector.Aggregate, cs []projector.Contribution) []projector.Contribution {
		out := make([]projector.Contribution, len(cs))
		for i, c := range cs {
			if from, ok := c.Scale["totalCost"]; ok && from != scale {
				counters := make(map[string]int64, len(c.Counters))
				for k, v := range c.Counters {
					counters[k] = v
				}
				v, div := counters["totalCost"], int64(1)
				for range from - scale {
					div *= 10
				}
				counters["totalCost"] = (v + div/2) / div // costs are never negative
				c.Counters, c.Scale = counters, map[string]int{"totalCost": scale}
			}
			out[i] = c
		}
		return out
	}
}

// scaleStore is a store under test and a way to read a workflows row.
type scaleStore struct {
	store projector.Store
	get   func(t *testing.T, key map[string]types.AttributeValue) map[string]types.AttributeValue
}

// scaleStores are the stores the scale test runs on, by name: the memory
// store, and DynamoDB Local (skipped when absent, unless required).
func scaleStores() map[string]func(t *testing.T) scaleStore {
	mem := func(t *testing.T) scaleStore {
		m := projector.NewMemStore()
		return scaleStore{m, func(t *testing.T, key map[string]types.AttributeValue) map[string]types.AttributeValue {
			it, _ := m.Get(context.Background(), schema.TableWorkflows, key)
			return it
		}}
	}
	dynamo := func(t *testing.T) scaleStore {
		c := testenv.Clients(t)
		n, _ := testenv.Tables(t, c)
		st, err := projector.NewDynamoStore(c.DynamoDB, n)
		if err != nil {
			t.Fatal(err)
		}
		return scaleStore{st, func(t *testing.T, key map[string]types.AttributeValue) map[string]types.AttributeValue {
			out, err := c.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(n.Table(schema.TableWorkflows)), Key: key, ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			return out.Item
		}}
	}
	return map[string]func(t *testing.T) scaleStore{"memory": mem, "dynamodb": dynamo}
}

// albumEvent builds a validated album execution event.
func albumEvent(t *testing.T, typ, workflow, exec string, at time.Time, data map[string]any) schema.Event {
	t.Helper()
	data["workflowType"], data["executionId"] = workflow, exec
	b, _ := json.Marshal(data)
	rec := at.Add(time.Second)
	e := schema.Event{ID: exec[:8] + "-" + typ, Source: "streamfold.albums/" + workflow, Type: typ, Time: at, RecordedAt: &rec, Data: b}
	if _, err := schema.Validate(&e); err != nil {
		t.Fatalf("%s: %v", e.ID, err)
	}
	return e
}

// TestCounterScaleChangeMidStream: a deploy changes totalCost's scale
// (micro- to nano-dollars, and back) between two halves of a workload on
// the same daily rows. Executions folded under the old scale are changed
// again under the new one (and their old events redelivered): every row
// ends at the exact sum of each execution's cost under the rule in force
// at its last change. An execution costing 0.5 stays 0.5 (mixing units
// made it 0.9995). On the memory store and on DynamoDB Local.
func TestCounterScaleChangeMidStream(t *testing.T) {
	day := testclock.DaysAgo(1)
	date := day.Format("2006-01-02")
	exec := func(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }
	type execution struct {
		workflow string
		cost     float64
		before   bool // completed before the switch
		after    bool // changed after the switch
	}
	execs := []execution{
		{schema.WorkflowDurableFunctions, 0.5, true, true},
		{schema.WorkflowStepFunctions, 0.123456789, true, true},
		{schema.WorkflowStepFunctions, 0.25, true, false},
		{schema.WorkflowStepFunctions, 0.000000007, true, true},
		{schema.WorkflowStepFunctions, 0.1, false, true},
	}
	var first, second []schema.Event
	for i, x := range execs {
		at := day.Add(time.Duration(i+1) * time.Hour)
		lifecycle := []schema.Event{
			albumEvent(t, schema.TypeAlbumExecutionStarted, x.workflow, exec(i), at, map[string]any{"imageS3Key": "uploads/a.jpg"}),
			albumEvent(t, schema.TypeAlbumExecutionCompleted, x.workflow, exec(i), at.Add(time.Minute), map[string]any{"durationMs": 60000, "estimatedCost": x.cost}),
		}
		if x.before {
			first = append(first, lifecycle...)
		} else {
			second = append(second, lifecycle...)
		}
		if x.after {
			second = append(second, albumEvent(t, schema.TypeAlbumExtracted, x.workflow, exec(i), at.Add(30*time.Second), map[string]any{
				"albumIndex": 1, "albumName": "Kind of Blue", "artist": "Miles Davis", "year": 1959, "imageRegion": map[string]any{"x": 0, "y": 0, "width": 10, "height": 10},
			}))
		}
	}
	rowKey := func(workflow string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: date}, "sk": &types.AttributeValueMemberS{Value: "metrics-" + workflow}}
	}
	type want struct{ durable, step string }
	for _, sw := range []struct {
		name     string
		from, to int
		want     want
	}{
		// 0.5; 0.123456789 + 0.25 (left at micro, exact) + 0.000000007 + 0.1.
		{"micro to nano", 6, 9, want{"0.5", "0.473456796"}},
		// 0.5; 0.123457 + 0.25 (left at nano) + 0 + 0.1.
		{"nano to micro", 9, 6, want{"0.5", "0.473457"}},
	} {
		for _, name := range []string{"memory", "dynamodb"} {
			t.Run(sw.name+"/"+name, func(t *testing.T) {
				s := scaleStores()[name](t)
				{
					proj, err := projector.New(s.store, projector.Config{})
					if err != nil {
						t.Fatal(err)
					}
					seq := 0
					project := func(evs []schema.Event) {
						t.Helper()
						var in []projector.Input
						for _, e := range evs {
							seq++
							i, ok, err := projector.InputOf(e, fmt.Sprintf("%021d", seq))
							if err != nil || !ok {
								t.Fatalf("InputOf(%s) = %v, %v", e.ID, ok, err)
							}
							in = append(in, i)
						}
						if out := proj.Project(context.Background(), in); len(out.Failed)+len(out.Poison) > 0 {
							t.Fatalf("Project: failed %v, poison %v", out.Failed, out.Poison)
						}
					}
					restore := projector.SetContributionsHookForTest(atScale(sw.from))
					project(first)
					restore()
					restore = projector.SetContributionsHookForTest(atScale(sw.to))
					defer restore()
					project(second)
					project(first) // redelivered after the deploy: nothing moves
					for workflow, w := range map[string]struct {
						cost  string
						count string
					}{
						schema.WorkflowDurableFunctions: {sw.want.durable, "1"},
						schema.WorkflowStepFunctions:    {sw.want.step, "4"},
					} {
						row := s.get(t, rowKey(workflow))
						if got := sAttr(row, "totalCost"); got != w.cost {
							t.Errorf("%s totalCost = %s, want %s", workflow, got, w.cost)
						}
						if got := sAttr(row, "executionCount"); got != w.count {
							t.Errorf("%s executionCount = %s, want %s", workflow, got, w.count)
						}
					}
				}
			})
		}
	}
}
