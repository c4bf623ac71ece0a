package streamimage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/streamfold/streamfold/schema"
)

// TestEventCompressedRecordFixture decodes a record whose item was written
// compressed (data B, dataenc "zstd+dict:32769") by the first version that
// compressed. The fixture is frozen: every later version must still read it
// byte for byte, whatever dictionary it compresses with itself.
func TestEventCompressedRecordFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/compressed_record.json")
	mustNoErr(t, "read fixture", err)
	want, err := os.ReadFile("testdata/compressed_record.data.json")
	mustNoErr(t, "read data", err)
	var rec events.DynamoDBEventRecord
	mustNoErr(t, "decode fixture", json.Unmarshal(raw, &rec))
	if dt := rec.Change.NewImage[schema.AttrData].DataType(); dt != events.DataTypeBinary {
		t.Fatalf("fixture data has type %v, want binary", dt)
	}
	ev, payload, ok, err := Event(rec)
	if err != nil || !ok {
		t.Fatalf("Event: ok=%v err=%v", ok, err)
	}
	if !bytes.Equal(ev.Data, want) {
		t.Fatalf("data differs from testdata/compressed_record.data.json:\n got %.200s...\nwant %.200s...", ev.Data, want)
	}
	if _, isJob := payload.(*schema.WorkflowJobWebhook); !isJob || ev.Subject != "github/12345/job/31275968012" {
		t.Fatalf("decoded %T for %s", payload, ev.Subject)
	}
}

// payloadEvents returns events of every domain: the GitHub example webhooks
// (minified, 7-8 KB, so stored compressed) and schema's valid examples
// (small, stored as text).
func payloadEvents(t *testing.T) []schema.Event {
	t.Helper()
	var out []schema.Event
	files, err := filepath.Glob("../../ingest/testdata/github/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no webhook fixtures (%v)", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		mustNoErr(t, f, err)
		var body bytes.Buffer
		mustNoErr(t, f, json.Compact(&body, raw))
		action := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(f), ".json"), "workflow_job_")
		out = append(out, schema.Event{ID: "d-" + action, Source: "https://github.com/runs-on",
			Type: schema.WorkflowJobTypePrefix + action, Time: time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC), Data: body.Bytes()})
	}
	fh, err := os.Open("../testdata/valid.ndjson")
	mustNoErr(t, "open valid.ndjson", err)
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var e schema.Event
		mustNoErr(t, "valid.ndjson", json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e)
	}
	for i := range out {
		_, err := schema.Validate(&out[i])
		mustNoErr(t, out[i].ID, err)
		at := out[i].Time.Add(time.Second)
		out[i].RecordedAt = &at
	}
	return out
}

// TestEventThroughEveryRepresentation: an event appended as an item comes
// out of Event with the exact original data, whether the record arrives as
// Lambda JSON, from GetRecords (LambdaRecord) or from a dead letter (the
// record stored as JSON and decoded again), stored as text or compressed.
func TestEventThroughEveryRepresentation(t *testing.T) {
	compressed := 0
	for _, e := range payloadEvents(t) {
		for _, enc := range []schema.DataEncoding{schema.DataCompressed, schema.DataPlain} {
			item, err := schema.ItemEncoded(e, 14*24*time.Hour, enc)
			mustNoErr(t, e.ID+" Item", err)
			if _, ok := item[schema.AttrDataEncoding]; ok {
				compressed++
			}
			for name, rec := range recordsOf(t, item) {
				got, _, ok, err := Event(rec)
				if err != nil || !ok {
					t.Fatalf("%s %s %s: ok=%v err=%v", e.ID, enc, name, ok, err)
				}
				if !bytes.Equal(got.Data, e.Data) {
					t.Fatalf("%s %s %s: data changed:\n got %.120s\nwant %.120s", e.ID, enc, name, got.Data, e.Data)
				}
				a, _ := json.Marshal(e)
				b, _ := json.Marshal(got)
				if string(a) != string(b) {
					t.Fatalf("%s %s %s: event changed:\n got %s\nwant %s", e.ID, enc, name, b, a)
				}
			}
		}
	}
	if compressed == 0 {
		t.Fatal("no event was stored compressed")
	}
}

// recordsOf returns the INSERT record of item in every form a consumer
// meets it.
func recordsOf(t *testing.T, item map[string]types.AttributeValue) map[string]events.DynamoDBEventRecord {
	t.Helper()
	out := map[string]events.DynamoDBEventRecord{}

	img, err := ToLambda(item)
	mustNoErr(t, "ToLambda", err)
	raw, err := json.Marshal(events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{NewImage: img}})
	mustNoErr(t, "marshal", err)
	var fromJSON events.DynamoDBEventRecord
	mustNoErr(t, "unmarshal", json.Unmarshal(raw, &fromJSON))
	out["lambda-json"] = fromJSON

	simg, err := ToStreams(item)
	mustNoErr(t, "ToStreams", err)
	rec, err := LambdaRecord(streamtypes.Record{EventName: streamtypes.OperationTypeInsert, EventID: aws.String("e"),
		Dynamodb: &streamtypes.StreamRecord{NewImage: simg, SequenceNumber: aws.String("1")}}, "arn", "us-east-1")
	mustNoErr(t, "LambdaRecord", err)
	out["getrecords"] = rec

	raw, err = json.Marshal(rec) // as a dead letter stores it
	mustNoErr(t, "marshal dead letter", err)
	var dead events.DynamoDBEventRecord
	mustNoErr(t, "unmarshal dead letter", json.Unmarshal(raw, &dead))
	out["dead-letter"] = dead
	return out
}

// FuzzEventData: any payload goes in through Item and comes out of the
// stream image, as Lambda JSON and as a GetRecords image, byte for byte.
func FuzzEventData(f *testing.F) {
	f.Add([]byte(`{"size":1e400,"s":"\u00e9 \"q\""}`))
	f.Add([]byte(`{}`))
	f.Add(bytes.Repeat([]byte(`{"url":"https://api.github.com/repos/o/r"},`), 100))
	f.Fuzz(func(t *testing.T, payload []byte) {
		// Data is UTF-8 JSON (schema.Validate rejects anything else);
		// other input is wrapped as a JSON string.
		if !json.Valid(payload) || !utf8.Valid(payload) {
			quoted, _ := json.Marshal(string(payload))
			payload = append(append([]byte(`{"raw":`), quoted...), '}')
		}
		now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		// The long subject puts even a small payload above the compression
		// threshold.
		for _, subject := range []string{"x/1", "x/" + strings.Repeat("s", schema.CompressAboveBytes)} {
			e := schema.Event{Subject: subject, ID: "1", Source: "s", Type: "t", Time: now, Data: payload, RecordedAt: &now}
			item, err := schema.Item(e, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			img, err := ToLambda(item)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(img)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]events.DynamoDBAttributeValue
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			fromLambda, err := FromLambda(back)
			if err != nil {
				t.Fatal(err)
			}
			simg, err := ToStreams(item)
			if err != nil {
				t.Fatal(err)
			}
			fromStreams, err := FromStreams(simg)
			if err != nil {
				t.Fatal(err)
			}
			for name, it := range map[string]map[string]types.AttributeValue{"lambda-json": fromLambda, "getrecords": fromStreams} {
				got, err := schema.EventFromItem(it)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(got.Data, payload) {
					t.Fatalf("%s: data changed:\n got %q\nwant %q", name, got.Data, payload)
				}
			}
		}
	})
}
