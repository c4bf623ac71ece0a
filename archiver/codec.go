package archiver

import (
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// The codecs are shared: each keeps a pool of (costly to create) encoders.
var (
	zstdCodec   = &zstd.Codec{Level: zstd.SpeedDefault}
	zstdBetter  = &zstd.Codec{Level: zstd.SpeedBetterCompression}
	snappyCodec = &snappy.Codec{}
	noCodec     = &uncompressed.Codec{}
)

// codecOf is the codec of a file's columns (EncodeOptions.Compression);
// columnCodec may choose another for some of them.
func codecOf(name string) compress.Codec {
	switch name {
	case "snappy":
		return snappyCodec
	case "none":
		return noCodec
	case "zstd-better":
		return zstdBetter
	default:
		return zstdCodec
	}
}

// columnCodec is the codec of a column when it is not the file's, else nil.
// With zstd (the batches' default), every text column that is not
// dictionary-encoded (the payload, ids, subjects, names, raw times) is
// compressed at zstd-better's level, and the rest (dictionary indexes,
// numbers, times) at the default one. At the default level zstd spends
// random ids on short matches that cost more than the literals (event_id,
// random UUIDs: 26 B/event at the default level, 19.3 at the better one;
// gzip: 19.2), and finds fewer of the payloads' repeated objects (the
// simulated mix's data column: 6.4 B/event more). The better level costs
// the batch path about 6% of its encoding rate (docs/benchmarks.md,
// "Archiver"); that buys archive batches smaller than the gzip NDJSON of
// their events.
func columnCodec(c colDef, compression string) compress.Codec {
	if compression == "zstd" && c.Type == TypeString && !c.dict {
		return zstdBetter
	}
	return nil
}
