package archiver_test

import (
	"bytes"
	"fmt"
	"time"

	"github.com/streamfold/streamfold/archiver"
	"github.com/streamfold/streamfold/schema"
)

func ExampleTableFor() {
	for _, typ := range []string{"github.workflow_job.completed", "runson.runner.terminated", "album.priced", "rez.message.failed", "aws.states.execution_status_change", "nope"} {
		table, ok := archiver.TableFor(typ)
		fmt.Println(typ, "->", table, ok)
	}
	// Output:
	// github.workflow_job.completed -> github_jobs true
	// runson.runner.terminated -> github_jobs true
	// album.priced -> album_workflow true
	// rez.message.failed -> messages true
	// aws.states.execution_status_change -> agent_executions true
	// nope ->  false
}

func ExampleParseURI() {
	bucket, prefix, err := archiver.ParseURI("s3://acme-streamfold-prod-archive/events/v1/")
	fmt.Println(bucket, prefix, err)
	_, _, err = archiver.ParseURI("acme/events")
	fmt.Println(err)
	// Output:
	// acme-streamfold-prod-archive events/v1 <nil>
	// archiver: bad s3 URI: "acme/events": must start with s3://
}

func ExampleEncode() {
	recorded := time.Date(2025, 10, 21, 14, 30, 15, 123456789, time.UTC)
	rec := archiver.Record{
		Event: schema.Event{
			SpecVersion: "1.0", ID: "seed004-failed", Source: "rez_agent/dev", Type: "rez.message.failed",
			Subject:    "messages/550e8400-e29b-41d4-a716-446655440000",
			Time:       time.Date(2025, 10, 21, 14, 30, 15, 0, time.UTC),
			Data:       []byte(`{"message_id":"550e8400-e29b-41d4-a716-446655440000","stage":"dev","error_message":"ntfy.sh returned 503"}`),
			RecordedAt: &recorded,
		},
		Seq: "4900000000000000000001", StreamEventID: "c81e728d9d4c2f636f067f89cc14862c",
	}
	var buf bytes.Buffer
	if err := archiver.Encode(&buf, archiver.TableMessages, []archiver.Record{rec}, archiver.EncodeOptions{}); err != nil {
		panic(err)
	}
	out, err := archiver.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	e := out[0].Event
	fmt.Println(e.ID, e.Type, out[0].Seq)
	fmt.Println(e.RecordedAt.Format(time.RFC3339Nano), string(e.Data) == string(rec.Event.Data))
	// Output:
	// seed004-failed rez.message.failed 4900000000000000000001
	// 2025-10-21T14:30:15.123456789Z true
}
