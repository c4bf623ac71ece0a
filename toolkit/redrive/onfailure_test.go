package redrive

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseOnFailure reads on-failure records in every shape the help
// names, and names the value and field of a malformed one.
func TestParseOnFailure(t *testing.T) {
	first := "800000000003126276362..800000000003126276399 of shardId-00000001573689847184-864758bb"
	second := "900000000000000000001..900000000000000000001 of shardId-2"
	tests := []struct {
		file    string
		want    []string // ranges, "START..END of SHARD"
		wantErr string
	}{
		{"record.json", []string{first}, ""},
		{"records.ndjson", []string{first, second}, ""},
		{"array.json", []string{first, second}, ""},
		{"sqs_receive.json", []string{first, second}, ""},
		{"sns.json", []string{first}, ""},
		{"bad_no_shard.json", nil, "value 1, message 2 (its Body): DDBStreamBatchInfo: shardId is required"},
		{"bad_kinesis.json", nil, "value 1: no DDBStreamBatchInfo: not the on-failure record of a DynamoDB stream event source mapping"},
		{"bad_reversed.json", nil, "value 1: DDBStreamBatchInfo: startSequenceNumber 900000000003126276362 is after endSequenceNumber 800000000003126276399"},
		{"bad_not_json.txt", nil, "value 1: not JSON: invalid character 'R' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ParseOnFailure(f)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ranges []string
			for _, b := range got {
				ranges = append(ranges, b.Range.Start+".."+b.Range.End+" of "+b.Range.ShardID)
				if b.Condition != "RetryAttemptsExhausted" || !strings.HasPrefix(b.Range.StreamARN, "arn:aws:dynamodb:us-east-2:") {
					t.Errorf("%s: condition %q, stream %q", b.Where, b.Condition, b.Range.StreamARN)
				}
			}
			if strings.Join(ranges, "; ") != strings.Join(tt.want, "; ") {
				t.Fatalf("ranges %q, want %q", ranges, tt.want)
			}
		})
	}
	if _, err := ParseOnFailure(strings.NewReader("  \n")); err == nil || err.Error() != "no on-failure record in the input" {
		t.Fatalf("empty input: %v", err)
	}
}

// TestParseS3OnFailureObject reads the object an S3 on-failure destination
// writes: the batch's range and, from its payload, the records themselves.
func TestParseS3OnFailureObject(t *testing.T) {
	tests := []struct {
		file    string
		seqs    []string
		wantErr string
	}{
		{"s3_object.json", []string{"111100000000012345678901", "111200000000012345678902"}, ""},
		{"bad_s3_payload.json", nil, "value 1: payload: Records[0]: dynamodb.SequenceNumber is required"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseOnFailure(bytes.NewReader(b))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("%d batches, %v; want 1", len(got), err)
			}
			var seqs []string
			for _, r := range got[0].Records {
				seqs = append(seqs, r.Change.SequenceNumber)
				if r.EventName != "INSERT" || r.Change.NewImage["subject"].String() == "" {
					t.Errorf("record %s: %s without a subject in its NewImage", r.Change.SequenceNumber, r.EventName)
				}
			}
			if strings.Join(seqs, ",") != strings.Join(tt.seqs, ",") || got[0].Range.Start != tt.seqs[0] || got[0].BatchSize != 2 {
				t.Fatalf("records %v, batch %+v; want %v", seqs, got[0].Range, tt.seqs)
			}
		})
	}
	// The payload as an object (not the documented string) is read alike.
	var rec map[string]any
	b, _ := os.ReadFile(filepath.Join("testdata", "s3_object.json"))
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var payload any
	_ = json.Unmarshal([]byte(rec["payload"].(string)), &payload)
	rec["payload"] = payload
	b, _ = json.Marshal(rec)
	if got, err := ParseOnFailure(bytes.NewReader(b)); err != nil || len(got) != 1 || len(got[0].Records) != 2 {
		t.Fatalf("payload as an object: %+v, %v", got, err)
	}
	for _, uri := range []string{"s3:///key", "http://x/y"} {
		if _, _, err := parseS3URI(uri); err == nil {
			t.Errorf("parseS3URI(%q): no error", uri)
		}
	}
}
