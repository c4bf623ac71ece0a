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
// With zstd (the batches' default), the text columns that are neither the
// payload nor dictionary-encoded (ids, subjects, names, raw times) are
// compressed at zstd-better's level: at the default level zstd spends
// random ids on short matches that cost more than the literals (event_id,
// random UUIDs: 26 B/event at the default level, 19.3 at the better one;
// gzip: 19.2). They are a small part of a file's bytes, so the better level
// costs little time; the payload, most of the bytes, keeps the default.
func columnCodec(c colDef, compression string) compress.Codec {
	if compression == "zstd" && c.Type == TypeString && !c.dict && !c.bulk {
		return zstdBetter
	}
	return nil
}
