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
