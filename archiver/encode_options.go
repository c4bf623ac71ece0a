package archiver

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Defaults of EncodeOptions.
const (
	// DefaultRowGroupRows caps the rows of one row group.
	DefaultRowGroupRows = 1_000_000
	// DefaultRowGroupBytes caps the (estimated, uncompressed) bytes of one
	// row group: Athena reads row groups in parallel and prefers them large.
	DefaultRowGroupBytes = 128 << 20
	// DefaultCompression is the codec of every column.
	DefaultCompression = "zstd"
)

// Compressions lists the values EncodeOptions.Compression accepts.
var Compressions = []string{"zstd", "zstd-better", "snappy", "none"}

// EncodeOptions tunes the Parquet files. The zero value means the defaults.
type EncodeOptions struct {
	// RowGroupRows is the most rows in one row group (default 1,000,000).
	RowGroupRows int
	// RowGroupBytes closes a row group once the estimated uncompressed size
	// of its values reaches it (default 128 MiB).
	RowGroupBytes int64
	// Compression is zstd (default; ids and other free text at zstd-better's
	// level, see columnCodec), zstd-better (about 5% smaller, slower to
	// write; what compaction uses), snappy or none.
	Compression string
}

func (o EncodeOptions) withDefaults() EncodeOptions {
	o.RowGroupRows = cmp.Or(o.RowGroupRows, DefaultRowGroupRows)
	o.RowGroupBytes = cmp.Or(o.RowGroupBytes, DefaultRowGroupBytes)
	o.Compression = cmp.Or(o.Compression, DefaultCompression)
	return o
}

// Validate names the first bad field.
func (o EncodeOptions) Validate() error {
	switch {
	case o.RowGroupRows < 0:
		return fmt.Errorf("archiver: EncodeOptions.RowGroupRows: must not be negative, got %d", o.RowGroupRows)
	case o.RowGroupBytes < 0:
		return fmt.Errorf("archiver: EncodeOptions.RowGroupBytes: must not be negative, got %d", o.RowGroupBytes)
	case o.Compression != "" && !slices.Contains(Compressions, o.Compression):
		return fmt.Errorf("archiver: EncodeOptions.Compression: must be one of %s, got %q", strings.Join(Compressions, ", "), o.Compression)
	}
	return nil
}
