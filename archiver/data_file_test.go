package archiver

import (
	"bytes"
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/streamfold/streamfold/archiver/internal/s3mem"
)

// TestWrittenFileIsWhatAddFilesReads: the data file a commit builds from a
// written file's footer in memory (writtenFile.dataFile) equals the one
// iceberg-go's AddFiles builds by reading the stored file back
// (table.FileToDataFile): path, size, record count, partition and every
// column statistic.
func TestWrittenFileIsWhatAddFilesReads(t *testing.T) {
	ctx := context.Background()
	mem := s3mem.New("bkt")
	cat, err := openCatalog(ctx, "sqlite:"+t.TempDir()+"/c.db", registerS3(mem, ""))
	if err != nil {
		t.Fatal(err)
	}
	k := &lake{cat: cat, namespace: table.Identifier{"ns"}, l: layout{bucket: "bkt", prefix: "archive"}, ensured: map[string]bool{}}
	tbl, err := k.load(ctx, TableGitHubJobs)
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile("testdata/github_jobs_millis_v1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	all, err := Decode(bytes.NewReader(fixture), int64(len(fixture)))
	if err != nil {
		t.Fatal(err)
	}
	date := EventDate(all[0].Event.Time)
	var recs []Record
	for _, r := range all {
		if EventDate(r.Event.Time) == date {
			recs = append(recs, r)
		}
	}
	var buf bytes.Buffer
	if err := Encode(&buf, TableGitHubJobs, recs, EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	key := k.l.batchKey(TableGitHubJobs, date, newBatchName(recs[0].Seq, recs[len(recs)-1].Seq, recordID(&recs[0])))
	if _, err := mem.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key), Body: bytes.NewReader(buf.Bytes())}); err != nil {
		t.Fatal(err)
	}

	f, err := newWrittenFile(key, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.dataFile(k.l, tbl)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, err := table.FileToDataFile(ctx, fs, k.l.uri(key), tbl.Schema(), tbl.Spec(), 0, tbl.Properties())
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Partition()) != 1 || want.Count() != int64(len(recs)) || len(want.LowerBoundValues()) == 0 {
		t.Fatalf("AddFiles' data file: partition %v, %d records, bounds %v: the comparison would be vacuous", want.Partition(), want.Count(), want.LowerBoundValues())
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"content", got.ContentType(), want.ContentType()},
		{"path", got.FilePath(), want.FilePath()},
		{"format", got.FileFormat(), want.FileFormat()},
		{"partition", got.Partition(), want.Partition()},
		{"spec", got.SpecID(), want.SpecID()},
		{"count", got.Count(), want.Count()},
		{"size", got.FileSizeBytes(), want.FileSizeBytes()},
		{"column sizes", got.ColumnSizes(), want.ColumnSizes()},
		{"value counts", got.ValueCounts(), want.ValueCounts()},
		{"null counts", got.NullValueCounts(), want.NullValueCounts()},
		{"NaN counts", got.NaNValueCounts(), want.NaNValueCounts()},
		{"lower bounds", got.LowerBoundValues(), want.LowerBoundValues()},
		{"upper bounds", got.UpperBoundValues(), want.UpperBoundValues()},
		{"split offsets", got.SplitOffsets(), want.SplitOffsets()},
		{"sort order", got.SortOrderID(), want.SortOrderID()},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, AddFiles reads %v", c.name, c.got, c.want)
		}
	}
	if got.FileFormat() != iceberg.ParquetFile {
		t.Errorf("format %s", got.FileFormat())
	}
}
