package archiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver"
)

// twoShards returns the records of two shards whose batches share their
// first and last sequence numbers (100-104): five events each, of one
// table and day, so that each shard's batch is one file of the same
// partition. Sequence numbers are unique only within a shard; the
// records' eventIDs tell the shards apart.
func twoShards(t *testing.T) (a, b []archiver.Record) {
	t.Helper()
	msgs := byTable(simRecords(t, 7, 600, 1))[archiver.TableMessages]
	var day []archiver.Record
	for _, r := range msgs {
		if archiver.EventDate(r.Event.Time) == archiver.EventDate(msgs[0].Event.Time) {
			day = append(day, r)
		}
	}
	if len(day) < 10 {
		t.Fatalf("%d messages on one day: the test needs 10", len(day))
	}
	for i := range 5 {
		ra, rb := day[i], day[5+i]
		ra.Seq, rb.Seq = strconv.Itoa(100+i), strconv.Itoa(100+i)
		ra.StreamEventID, rb.StreamEventID = "shard-a-"+strconv.Itoa(i), "shard-b-"+strconv.Itoa(i)
		a, b = append(a, ra), append(b, rb)
	}
	return a, b
}

// write delivers one batch and checks what it wrote and skipped.
func write(t *testing.T, a *archiver.Archive, recs []archiver.Record, objects, skipped int) {
	t.Helper()
	st, err := a.WriteBatch(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Objects != objects || st.Skipped != skipped || st.Records != len(recs) {
		t.Fatalf("batch %s-%s (%s...): %+v, want %d objects written and %d records skipped",
			recs[0].Seq, recs[len(recs)-1].Seq, recs[0].StreamEventID, st, objects, skipped)
	}
}

// objects returns the data files of the messages partition of recs.
func objects(t *testing.T, a *archiver.Archive, recs []archiver.Record) []string {
	t.Helper()
	keys, err := a.Objects(context.Background(), archiver.TableMessages, archiver.EventDate(recs[0].Event.Time))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestShardsWithTheSameSequenceNumbers: two shards' batches that start and
// end at the same sequence numbers are both kept (their keys name their
// first record, not only its sequence number), and each one's redelivery,
// whole or bisected, is still recognised: skipped, or replacing only its
// own shard's file.
func TestShardsWithTheSameSequenceNumbers(t *testing.T) {
	c, bucket := newBucket(t)
	sa, sb := twoShards(t)
	both := append(slices.Clone(sa), sb...)

	t.Run("whole redeliveries", func(t *testing.T) {
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "whole"})
		write(t, a, sa, 1, 0)
		write(t, a, sb, 1, 0) // not taken for a redelivery of shard a's batch
		exactlyOnce(t, a, both)
		write(t, a, sa, 0, 5) // redeliveries: committed already
		write(t, a, sb, 0, 5)
		exactlyOnce(t, a, both)
		if keys := objects(t, a, sa); len(keys) != 2 {
			t.Fatalf("data files %v, want one per shard", keys)
		}
	})
	t.Run("bisected redelivery", func(t *testing.T) {
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "bisect"})
		write(t, a, sb, 1, 0)
		write(t, a, sa, 1, 0) // committed, then the invocation failed: Lambda bisects
		write(t, a, sa[:2], 1, 0)
		write(t, a, sa[2:], 1, 0)
		write(t, a, sa[2:], 0, 3)
		exactlyOnce(t, a, both)
		if keys := objects(t, a, sa); len(keys) != 3 {
			t.Fatalf("data files %v, want shard b's and the two halves of shard a's", keys)
		}
	})
}

// TestLegacyKeysStayExactlyOnce: files committed under the keys of before
// (<first seq>-<last seq>.parquet, which do not name the first record) stay
// readable and exactly-once: a redelivery of their batch after the change
// is recognised (the file is read: it holds the batch's first record) and
// skipped, or, bisected, replaces it; another shard's batch at the same
// sequence numbers is kept beside it.
func TestLegacyKeysStayExactlyOnce(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	sa, sb := twoShards(t)
	both := append(slices.Clone(sa), sb...)

	t.Run("redelivered whole", func(t *testing.T) {
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "whole"})
		legacy, err := a.WriteLegacyBatch(ctx, sa)
		if err != nil {
			t.Fatal(err)
		}
		exactlyOnce(t, a, sa)
		write(t, a, sb, 1, 0) // another shard, same sequence numbers: kept
		write(t, a, sa, 0, 5) // the legacy file's batch again: skipped
		write(t, a, sb, 0, 5)
		exactlyOnce(t, a, both)
		if keys := objects(t, a, sa); len(keys) != 2 || !slices.Contains(keys, legacy) {
			t.Fatalf("data files %v, want the legacy %s and shard b's", keys, legacy)
		}
	})
	t.Run("redelivered bisected", func(t *testing.T) {
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "bisect"})
		legacy, err := a.WriteLegacyBatch(ctx, sa)
		if err != nil {
			t.Fatal(err)
		}
		write(t, a, sb, 1, 0)
		write(t, a, sa[:2], 1, 0) // replaces the legacy file in its commit
		exactlyOnce(t, a, append(slices.Clone(sa[:2]), sb...))
		write(t, a, sa[2:], 1, 0)
		exactlyOnce(t, a, both)
		if keys := objects(t, a, sa); len(keys) != 3 || slices.Contains(keys, legacy) {
			t.Fatalf("data files %v, want shard b's and shard a's two halves, not the replaced %s", keys, legacy)
		}
	})
	t.Run("another shard's legacy file", func(t *testing.T) {
		a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "other"})
		if _, err := a.WriteLegacyBatch(ctx, sb); err != nil {
			t.Fatal(err)
		}
		write(t, a, sa[:2], 1, 0) // same first sequence number, another record: not a delivery of sb
		write(t, a, sa[2:], 1, 0)
		exactlyOnce(t, a, both)
	})
}

// poisonRecord is a stream record at seq whose item is no event.
func poisonRecord(t *testing.T, seq, eventID string) events.DynamoDBEventRecord {
	t.Helper()
	rec := streamRecord(t, seq, "INSERT", map[string]types.AttributeValue{"subject": &types.AttributeValueMemberS{Value: "x-" + eventID}})
	rec.EventID = eventID
	return rec
}

// TestPoisonOfTwoShardsAtOneSequenceNumber: error records name their
// eventID too, so two shards' poison records at the same sequence number
// are both kept; a redelivery overwrites its own. A record quarantined
// under the key of before (<seq>.json) is not stored again when it is
// redelivered; another shard's record at that sequence number is.
func TestPoisonOfTwoShardsAtOneSequenceNumber(t *testing.T) {
	ctx := context.Background()
	c, bucket := newBucket(t)
	a := newArchive(t, c.S3, archiver.Config{Bucket: bucket, Prefix: "arch"})
	h := archiver.NewHandler(a, quietLog())
	handle := func(recs ...events.DynamoDBEventRecord) {
		t.Helper()
		st, err := h.ArchiveRecords(ctx, recs)
		if err != nil || st.Poison != len(recs) {
			t.Fatalf("ArchiveRecords: %+v, %v; want %d poison records", st, err, len(recs))
		}
	}
	count := func(want int) {
		t.Helper()
		errs, err := a.Errors(ctx)
		if err != nil || len(errs) != want {
			t.Fatalf("Errors: %d, %v; want %d", len(errs), err, want)
		}
	}
	handle(poisonRecord(t, "500", "shard-a-p"))
	handle(poisonRecord(t, "500", "shard-b-p"))
	count(2)
	handle(poisonRecord(t, "500", "shard-a-p"), poisonRecord(t, "500", "shard-b-p")) // redelivered
	count(2)

	// Quarantined before error keys named the eventID.
	old := poisonRecord(t, "600", "shard-a-q")
	raw, _ := json.Marshal(old)
	body, _ := json.Marshal(archiver.ErrorRecord{SequenceNumber: "600", EventID: "shard-a-q", EventName: "INSERT", Reason: "poison",
		SeenAt: old.Change.ApproximateCreationDateTime.Time, Record: raw})
	key := a.LegacyErrorKey(archiver.EventDate(old.Change.ApproximateCreationDateTime.Time), "600")
	if _, err := c.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	count(3)
	handle(old) // a redelivery across the change: listed once
	count(3)
	handle(poisonRecord(t, "600", "shard-b-q")) // another shard's, at the legacy key's sequence number
	count(4)
	errs, _ := a.Errors(ctx)
	ids := map[string]bool{}
	for _, e := range errs {
		ids[e.SequenceNumber+"/"+e.EventID] = true
	}
	for _, want := range []string{"500/shard-a-p", "500/shard-b-p", "600/shard-a-q", "600/shard-b-q"} {
		if !ids[want] {
			t.Errorf("no error record %s in %v", want, ids)
		}
	}
}
