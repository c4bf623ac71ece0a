package schema

import (
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/streamfold/streamfold/schema/internal/ghurls"
)

//go:generate go run ./internal/zdictgen -id 32770 -out zdict/32770.zdict

// DataEncoding chooses how Item stores an event's data.
type DataEncoding int

const (
	// DataCompressed (the default) stores data as text when the item then
	// fits in one write unit, and otherwise zstd-compressed with the current
	// dictionary (CurrentDictionary) when that makes the item smaller, after
	// eliding the URLs of a GitHub webhook that GitHub derives from the
	// payload's own ids and names (encoding EncodingGitHubURLsPrefix; the
	// read restores them byte for byte). Data without such URLs is
	// compressed as DataCompressedKeepURLs does.
	DataCompressed DataEncoding = iota
	// DataPlain always stores data as text (attribute type S), the only
	// format before compression was introduced; for comparisons, and for a
	// producer that must keep writing items consumers older than
	// compression can read.
	DataPlain
	// DataCompressedNoDictionary is DataCompressed without a dictionary, for
	// measuring what the dictionary adds.
	DataCompressedNoDictionary
	// DataCompressedKeepURLs is DataCompressed without eliding URLs: the
	// format DataCompressed wrote before EncodingGitHubURLsPrefix existed,
	// for a producer that must keep writing items that consumers older than
	// it can read.
	DataCompressedKeepURLs
)

func (e DataEncoding) String() string {
	switch e {
	case DataCompressed:
		return "compressed"
	case DataPlain:
		return "plain"
	case DataCompressedNoDictionary:
		return "compressed-no-dictionary"
	case DataCompressedKeepURLs:
		return "compressed-keep-urls"
	}
	return "DataEncoding(" + strconv.Itoa(int(e)) + ")"
}

// Values of the AttrDataEncoding attribute. An item without the attribute
// holds data as text (type S); with it, data is binary (type B).
const (
	// EncodingZstd: data is one zstd frame of the JSON text, without a
	// dictionary.
	EncodingZstd = "zstd"
	// EncodingZstdDictPrefix is followed by the decimal id of the zstd
	// dictionary the frame was compressed with, e.g. "zstd+dict:32769". The
	// frame header carries the same id.
	EncodingZstdDictPrefix = "zstd+dict:"
	// EncodingGitHubURLsPrefix is followed by one of the above: the frame
	// holds the data with the URLs a GitHub webhook derives from its own ids
	// and names elided (format ghurls1, schema/internal/ghurls), e.g.
	// "ghurls1+zstd+dict:32770". Reading restores them byte for byte.
	EncodingGitHubURLsPrefix = ghurls.Version + "+"
)

// CompressAboveBytes is the threshold below which data is never compressed:
// an item whose plain form is at most this size (one write unit) costs the
// least a write can cost, so compressing it would only make the item
// unreadable in the console.
const CompressAboveBytes = WriteUnitBytes

// MaxDataBytes bounds an event's data: Item never compresses more (such an
// item is far above MaxItemBytes as text, so ingest rejects it) and
// EventFromItem refuses to decompress more. It is GitHub's own cap on a
// webhook payload (25 MB).
const MaxDataBytes = 25 << 20

// CurrentDictionary is the id of the zstd dictionary Item compresses with.
// Every dictionary ever used stays registered (zdict/<id>.zdict), so items
// written with an older one still decode.
const CurrentDictionary = 32770

// KeepURLsDictionary is the dictionary DataCompressedKeepURLs compresses
// with: the one that was current before encoding ghurls1 (and its
// dictionary, trained on elided webhooks too), so that consumers of that
// time can read what it writes.
const KeepURLsDictionary = 32769

//go:embed zdict/*.zdict
var dictFiles embed.FS

// dictionaries returns the registered dictionaries by id, read from
// zdict/<id>.zdict. The file name and the id in the dictionary's header
// must agree.
var dictionaries = sync.OnceValues(func() (map[uint32][]byte, error) {
	entries, err := dictFiles.ReadDir("zdict")
	if err != nil {
		return nil, err
	}
	out := make(map[uint32][]byte, len(entries))
	for _, de := range entries {
		name := strings.TrimSuffix(de.Name(), ".zdict")
		id, err := strconv.ParseUint(name, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("schema: dictionary file %s: name is not an id", de.Name())
		}
		b, err := dictFiles.ReadFile("zdict/" + de.Name())
		if err != nil {
			return nil, err
		}
		if len(b) < 8 || string(b[:4]) != "\x37\xa4\x30\xec" {
			return nil, fmt.Errorf("schema: dictionary file %s: not a zstd dictionary", de.Name())
		}
		if got := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24; got != uint32(id) {
			return nil, fmt.Errorf("schema: dictionary file %s: header says id %d", de.Name(), got)
		}
		out[uint32(id)] = b
	}
	for _, id := range []uint32{CurrentDictionary, KeepURLsDictionary} {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("schema: dictionary %d is not registered", id)
		}
	}
	return out, nil
})

// encoderLevel: on a 8 KB webhook with the dictionary, about 0.3 ms for 980
// bytes, where SpeedBestCompression takes ten times as long for 2% less.
const encoderLevel = zstd.SpeedBetterCompression

// codecs holds the encoders and the decoder, built on first use (building
// them allocates their tables, which every binary that never compresses
// should not pay for).
type codecs struct {
	withDict *zstd.Encoder // CurrentDictionary
	noDict   *zstd.Encoder
	decoder  *zstd.Decoder // every registered dictionary
}

var getCodecs = sync.OnceValues(func() (*codecs, error) {
	dicts, err := dictionaries()
	if err != nil {
		return nil, err
	}
	// A single-segment frame always declares its content size, which
	// decompressData requires (EncodeAll omits it for small inputs
	// otherwise).
	level, single := zstd.WithEncoderLevel(encoderLevel), zstd.WithSingleSegment(true)
	withDict, err := zstd.NewWriter(nil, level, single, zstd.WithEncoderDict(dicts[CurrentDictionary]))
	if err != nil {
		return nil, fmt.Errorf("schema: zstd encoder with dictionary %d: %w", CurrentDictionary, err)
	}
	noDict, err := zstd.NewWriter(nil, level, single)
	if err != nil {
		return nil, fmt.Errorf("schema: zstd encoder: %w", err)
	}
	all := make([][]byte, 0, len(dicts))
	for _, d := range dicts {
		all = append(all, d)
	}
	decoder, err := zstd.NewReader(nil,
		zstd.WithDecoderDicts(all...),
		zstd.WithDecoderMaxMemory(MaxDataBytes),
		zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("schema: zstd decoder: %w", err)
	}
	return &codecs{withDict: withDict, noDict: noDict, decoder: decoder}, nil
})

// compressData returns data as one zstd frame and the AttrDataEncoding value
// naming how.
func compressData(data []byte, enc DataEncoding) ([]byte, string, error) {
	c, err := getCodecs()
	if err != nil {
		return nil, "", err
	}
	switch enc {
	case DataCompressedNoDictionary:
		return c.noDict.EncodeAll(data, nil), EncodingZstd, nil
	case DataCompressedKeepURLs:
		legacy, err := getKeepURLsEncoder()
		if err != nil {
			return nil, "", err
		}
		return legacy.EncodeAll(data, nil), EncodingZstdDictPrefix + strconv.Itoa(KeepURLsDictionary), nil
	}
	if elided, ok := ghurls.Elide(data); ok {
		return c.withDict.EncodeAll(elided, nil), EncodingGitHubURLsPrefix + EncodingZstdDictPrefix + strconv.Itoa(CurrentDictionary), nil
	}
	return c.withDict.EncodeAll(data, nil), EncodingZstdDictPrefix + strconv.Itoa(CurrentDictionary), nil
}

// getKeepURLsEncoder is the encoder of DataCompressedKeepURLs, built on
// first use (only producers held back for older consumers need it).
var getKeepURLsEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	dicts, err := dictionaries()
	if err != nil {
		return nil, err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(encoderLevel), zstd.WithSingleSegment(true), zstd.WithEncoderDict(dicts[KeepURLsDictionary]))
	if err != nil {
		return nil, fmt.Errorf("schema: zstd encoder with dictionary %d: %w", KeepURLsDictionary, err)
	}
	return enc, nil
})

// decompressData reverses compressData. The frame must be a single zstd
// frame that declares its size (at most MaxDataBytes) and whose dictionary
// id is the one the encoding names; with EncodingGitHubURLsPrefix, its
// content must be an elided form whose every marker restores (ghurls.Restore),
// to at most MaxDataBytes.
func decompressData(frame []byte, encoding string) ([]byte, error) {
	if inner, ok := strings.CutPrefix(encoding, EncodingGitHubURLsPrefix); ok {
		elided, err := decompressFrame(frame, inner)
		if err != nil {
			return nil, err
		}
		return ghurls.Restore(elided, MaxDataBytes)
	}
	return decompressFrame(frame, encoding)
}

// decompressFrame decodes one zstd frame as encoding (EncodingZstd or
// EncodingZstdDictPrefix and an id) names.
func decompressFrame(frame []byte, encoding string) ([]byte, error) {
	var wantDict uint32
	switch {
	case encoding == EncodingZstd:
	case strings.HasPrefix(encoding, EncodingZstdDictPrefix):
		id, err := strconv.ParseUint(strings.TrimPrefix(encoding, EncodingZstdDictPrefix), 10, 32)
		if err != nil || id == 0 {
			return nil, fmt.Errorf("unknown encoding %q", encoding)
		}
		dicts, err := dictionaries()
		if err != nil {
			return nil, err
		}
		if _, ok := dicts[uint32(id)]; !ok {
			return nil, fmt.Errorf("encoding %q: dictionary %d is not known to this version of streamfold", encoding, id)
		}
		wantDict = uint32(id)
	default:
		return nil, fmt.Errorf("unknown encoding %q", encoding)
	}
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, fmt.Errorf("not a zstd frame: %w", err)
	}
	switch {
	case h.Skippable:
		return nil, errors.New("a skippable zstd frame, not data")
	case h.DictionaryID != wantDict:
		return nil, fmt.Errorf("the zstd frame uses dictionary %d, the encoding %q says %d", h.DictionaryID, encoding, wantDict)
	case !h.HasFCS:
		return nil, errors.New("the zstd frame does not declare its size")
	case h.FrameContentSize > MaxDataBytes:
		return nil, fmt.Errorf("the zstd frame declares %d bytes, more than MaxDataBytes (%d)", h.FrameContentSize, MaxDataBytes)
	}
	c, err := getCodecs()
	if err != nil {
		return nil, err
	}
	out, err := c.decoder.DecodeAll(frame, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if uint64(len(out)) != h.FrameContentSize {
		return nil, fmt.Errorf("the zstd frame declares %d bytes and holds %d", h.FrameContentSize, len(out))
	}
	return out, nil
}
