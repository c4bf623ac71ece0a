package opsrec_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/internal/opsrec"
	"github.com/streamfold/streamfold/schema"
)

// TestStoreDynamoDB writes gaps and results to the checkpoints table on
// DynamoDB Local and reads them back in time order.
func TestStoreDynamoDB(t *testing.T) {
	ctx := context.Background()
	c := testenv.Clients(t)
	n, _ := testenv.Tables(t, c)
	s := opsrec.Store{API: c.DynamoDB, Table: n.Table(schema.TableCheckpoints)}

	if _, ok, err := s.LastResult(ctx); err != nil || ok {
		t.Fatalf("a table without results: ok %v, err %v", ok, err)
	}
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	gaps := []opsrec.Gap{
		{Consumer: "projector", Kind: opsrec.GapLatest, Shard: "shardId-1", Noticed: t0},
		{Consumer: "archiver", Kind: opsrec.GapTrimmed, Shard: "shardId-1", FirstSeq: "100", LastSeq: "200", Noticed: t0.Add(time.Second), From: t0.Add(-25 * time.Hour), To: t0.Add(-24 * time.Hour)},
		{Consumer: "archiver", Kind: opsrec.GapSequenceJump, Shard: "shardId-2", Noticed: t0.Add(time.Hour)},
	}
	for _, g := range gaps {
		if err := s.PutGap(ctx, g); err != nil {
			t.Fatal(err)
		}
		if err := s.PutGap(ctx, g); err != nil { // idempotent
			t.Fatal(err)
		}
	}
	got, err := s.Gaps(ctx, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != opsrec.GapTrimmed || got[1].Kind != opsrec.GapSequenceJump || !got[0].From.Equal(gaps[1].From) {
		t.Fatalf("gaps since %s: %+v", t0.Add(time.Second), got)
	}
	if err := s.PutGap(ctx, opsrec.Gap{Consumer: "x", Noticed: t0}); !errors.Is(err, opsrec.ErrInvalid) {
		t.Fatalf("a gap without kind: %v", err)
	}

	for i := range 3 {
		r := opsrec.Result{Started: t0, Finished: t0.Add(time.Duration(i) * time.Hour), From: t0.Add(-24 * time.Hour), To: t0, Events: i,
			Rows: []opsrec.DayGaps{{Domain: "github", Day: "2026-11-01", Events: 5, MissingArchive: i, IDs: map[string][]string{"archive": {"e1"}}}}}
		if err := s.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	last, ok, err := s.LastResult(ctx)
	if err != nil || !ok || last.Events != 2 || last.Gaps() != 2 || last.Rows[0].IDs["archive"][0] != "e1" {
		t.Fatalf("last result: %+v %v %v", last, ok, err)
	}
	all, err := s.Results(ctx, 0)
	if err != nil || len(all) != 3 || all[2].Events != 0 {
		t.Fatalf("results: %+v %v", all, err)
	}
	p := opsrec.Progress{Consumer: "projector", Shard: "shardId-1", LastSeq: "9", LastRecord: t0, Updated: t0.Add(2 * time.Second), Lag: 2 * time.Second, Records: 100, Since: t0.Add(-8 * time.Second)}
	for _, q := range []opsrec.Progress{p, {Consumer: "archiver", Shard: "shardId-1", Updated: t0}, p} {
		if err := s.PutProgress(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := s.Progresses(ctx)
	if err != nil || len(ps) != 2 || ps[0].Consumer != "archiver" || ps[1].Rate() != 10 || ps[1].Lag != 2*time.Second {
		t.Fatalf("progresses: %+v %v", ps, err)
	}
	if !opsrec.IsReserved(opsrec.ConsumerGap) || opsrec.IsReserved("projector") {
		t.Fatal("IsReserved")
	}
}
