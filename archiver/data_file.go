package archiver

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// writtenFile is a Parquet file the archive has just written: its key, its
// size and its footer, read from the bytes still in memory, so that a
// commit describes the file to Iceberg without reading it back from S3 (as
// the path-based Transaction.AddFiles and ReplaceDataFiles do).
type writtenFile struct {
	key    string
	size   int64
	footer *metadata.FileMetaData
}

// newWrittenFile reads the footer of body, the file stored at key.
func newWrittenFile(key string, body []byte) (writtenFile, error) {
	r, err := file.NewParquetReader(bytes.NewReader(body))
	if err != nil {
		return writtenFile{}, fmt.Errorf("archiver: read the footer of %s: %w", key, err)
	}
	defer r.Close()
	return writtenFile{key: key, size: int64(len(body)), footer: r.MetaData()}, nil
}

// dataFile describes the file as an Iceberg data file of t, as
// Transaction.AddFiles would from the same footer: record count, size,
// column statistics under the table's metrics properties, and the
// partition (the day of event_time) inferred from the event_time bounds.
func (f writtenFile) dataFile(l layout, t *icetable.Table) (iceberg.DataFile, error) {
	df, err := icetable.DataFileFromMetadata(icetable.DataFileArgs{
		Format:        iceberg.ParquetFile,
		Metadata:      f.footer,
		FilePath:      l.uri(f.key),
		FileSize:      f.size,
		Content:       iceberg.EntryContentData,
		Schema:        t.Schema(),
		Spec:          t.Spec(),
		Properties:    t.Properties(),
		FormatVersion: t.Metadata().Version(),
	})
	if err != nil {
		return nil, fmt.Errorf("archiver: describe %s: %w", f.key, err)
	}
	return df, nil
}

// dataFiles describes files as data files of t.
func dataFiles(l layout, t *icetable.Table, files []writtenFile) ([]iceberg.DataFile, error) {
	out := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		df, err := f.dataFile(l, t)
		if err != nil {
			return nil, err
		}
		out[i] = df
	}
	return out, nil
}
