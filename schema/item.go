package schema

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Event table attribute names. The key is (subject, id): every event of an
// aggregate shares a partition, so DynamoDB Streams keeps their order, and a
// repeated id for the same subject is the same item (an idempotent append).
const (
	AttrSubject     = "subject"
	AttrID          = "id"
	AttrSource      = "source"
	AttrEventType   = "type"
	AttrTime        = "time"
	AttrData        = "data"
	AttrRecordedAt  = "recordedat"
	AttrSpecVersion = "specversion"
	AttrTTL         = "ttl"

	// AttrDataEncoding is present exactly when data is stored compressed
	// (attribute type B); its value says how: EncodingZstd, or
	// EncodingZstdDictPrefix followed by the dictionary's id, either of them
	// possibly after EncodingGitHubURLsPrefix (a webhook's derivable URLs
	// elided before compressing).
	AttrDataEncoding = "dataenc"
)

// Item maps a validated event to its event-table item, storing data as
// DataCompressed does; see ItemEncoded.
func Item(e Event, retention time.Duration) (map[string]types.AttributeValue, error) {
	return ItemEncoded(e, retention, DataCompressed)
}

// ItemEncoded maps a validated event to its event-table item. data holds the
// exact JSON text the producer sent, so no number or field is ever reshaped:
// as text (attribute type S) when the plain item is at most
// CompressAboveBytes or enc is DataPlain, and otherwise as one zstd frame of
// those bytes (type B, with AttrDataEncoding naming the encoding) when that
// makes the item smaller; with DataCompressed, a GitHub webhook's URLs that
// equal their derivation from the payload are elided from the frame
// (EncodingGitHubURLsPrefix) and EventFromItem restores them. ttl is recordedat plus retention, in epoch
// seconds. RecordedAt must be set. The item may exceed MaxItemBytes: the
// caller checks ItemSize.
func ItemEncoded(e Event, retention time.Duration, enc DataEncoding) (map[string]types.AttributeValue, error) {
	if e.RecordedAt == nil {
		return nil, fmt.Errorf("%w: recordedat is not set", ErrMalformedItem)
	}
	item := map[string]types.AttributeValue{
		AttrSubject:     &types.AttributeValueMemberS{Value: e.Subject},
		AttrID:          &types.AttributeValueMemberS{Value: e.ID},
		AttrSpecVersion: &types.AttributeValueMemberS{Value: SpecVersion},
		AttrSource:      &types.AttributeValueMemberS{Value: e.Source},
		AttrEventType:   &types.AttributeValueMemberS{Value: e.Type},
		AttrTime:        &types.AttributeValueMemberS{Value: e.Time.UTC().Format(time.RFC3339Nano)},
		AttrData:        &types.AttributeValueMemberS{Value: string(e.Data)},
		AttrRecordedAt:  &types.AttributeValueMemberS{Value: e.RecordedAt.UTC().Format(time.RFC3339Nano)},
	}
	if retention > 0 {
		item[AttrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(e.RecordedAt.Add(retention).Unix(), 10)}
	}
	plain := ItemSize(item)
	switch {
	case enc == DataPlain, plain <= CompressAboveBytes, len(e.Data) > MaxDataBytes:
		return item, nil
	case enc != DataCompressed && enc != DataCompressedNoDictionary && enc != DataCompressedKeepURLs:
		return nil, fmt.Errorf("schema: ItemEncoded: unknown %s", enc)
	}
	frame, encoding, err := compressData(e.Data, enc)
	if err != nil {
		return nil, err
	}
	// The compressed item replaces the text (len(data)) by the frame and
	// adds the encoding attribute.
	if plain-len(e.Data)+len(frame)+len(AttrDataEncoding)+len(encoding) >= plain {
		return item, nil
	}
	item[AttrData] = &types.AttributeValueMemberB{Value: frame}
	item[AttrDataEncoding] = &types.AttributeValueMemberS{Value: encoding}
	return item, nil
}

// EventFromItem maps an event-table item (or a stream NewImage converted by
// package streamimage) back to the envelope. Data comes out as the exact
// bytes the producer sent, whichever way the item stores them: text (type S,
// every item written before compression, and small ones since) or a zstd
// frame (type B with AttrDataEncoding), with or without elided URLs. It checks shape only; call Validate
// for the payload rules. Errors wrap ErrMalformedItem and name the
// attribute; an item compressed with a dictionary this version does not
// know is one of them.
func EventFromItem(item map[string]types.AttributeValue) (Event, error) {
	return eventFromItem(item, true)
}

// ValidateItem is EventFromItem followed by Validate, parsing the data once:
// Validate decodes it, which rejects what is not JSON, so the JSON check of
// EventFromItem runs only when Validate fails. The errors are the ones the
// two calls give: itemErr those of EventFromItem (the item is malformed),
// else validErr those of Validate, with the event as Validate left it.
func ValidateItem(item map[string]types.AttributeValue) (e Event, p Payload, itemErr, validErr error) {
	if e, itemErr = eventFromItem(item, false); itemErr != nil {
		_, itemErr = EventFromItem(item) // the error the checked read gives first
		return Event{}, nil, itemErr, nil
	}
	if p, validErr = Validate(&e); validErr != nil {
		if _, err := EventFromItem(item); err != nil {
			return Event{}, nil, err, nil
		}
		return e, nil, nil, validErr
	}
	return e, p, nil, nil
}

// eventFromItem is EventFromItem, which checks that the data is JSON when
// checkJSON is set.
func eventFromItem(item map[string]types.AttributeValue, checkJSON bool) (Event, error) {
	str := func(name string, required bool) (string, error) {
		av, ok := item[name]
		if !ok {
			if required {
				return "", fmt.Errorf("%w: attribute %q is missing", ErrMalformedItem, name)
			}
			return "", nil
		}
		sv, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("%w: attribute %q must be a string (S)", ErrMalformedItem, name)
		}
		return sv.Value, nil
	}
	var e Event
	var err error
	if e.Subject, err = str(AttrSubject, true); err != nil {
		return Event{}, err
	}
	if e.ID, err = str(AttrID, true); err != nil {
		return Event{}, err
	}
	if e.Source, err = str(AttrSource, true); err != nil {
		return Event{}, err
	}
	if e.Type, err = str(AttrEventType, true); err != nil {
		return Event{}, err
	}
	if e.SpecVersion, err = str(AttrSpecVersion, false); err != nil {
		return Event{}, err
	}
	ts, err := str(AttrTime, true)
	if err != nil {
		return Event{}, err
	}
	if e.Time, err = time.Parse(time.RFC3339Nano, ts); err != nil {
		return Event{}, fmt.Errorf("%w: attribute %q: not an RFC 3339 time: %q", ErrMalformedItem, AttrTime, ts)
	}
	if e.Data, err = dataFromItem(item); err != nil {
		return Event{}, err
	}
	if checkJSON {
		if err := checkDataJSON(e.Data); err != nil {
			return Event{}, err
		}
	}
	rs, err := str(AttrRecordedAt, false)
	if err != nil {
		return Event{}, err
	}
	if rs != "" {
		rt, err := time.Parse(time.RFC3339Nano, rs)
		if err != nil {
			return Event{}, fmt.Errorf("%w: attribute %q: not an RFC 3339 time: %q", ErrMalformedItem, AttrRecordedAt, rs)
		}
		e.RecordedAt = &rt
	}
	return e, nil
}

// dataFromItem returns the bytes an item's data attribute holds (the
// caller checks that they are JSON: checkDataJSON).
func dataFromItem(item map[string]types.AttributeValue) (json.RawMessage, error) {
	var data []byte
	encAV, compressed := item[AttrDataEncoding]
	switch av := item[AttrData].(type) {
	case nil:
		return nil, fmt.Errorf("%w: attribute %q is missing", ErrMalformedItem, AttrData)
	case *types.AttributeValueMemberS:
		if av == nil {
			return nil, fmt.Errorf("%w: attribute %q is a nil value", ErrMalformedItem, AttrData)
		}
		if compressed {
			return nil, fmt.Errorf("%w: attribute %q: is text (S) but %q is set", ErrMalformedItem, AttrData, AttrDataEncoding)
		}
		data = []byte(av.Value)
	case *types.AttributeValueMemberB:
		enc, ok := encAV.(*types.AttributeValueMemberS)
		if av == nil || !ok || enc == nil {
			return nil, fmt.Errorf("%w: attribute %q: is binary (B) but %q is missing or not a string (S)", ErrMalformedItem, AttrData, AttrDataEncoding)
		}
		var err error
		if data, err = decompressData(av.Value, enc.Value); err != nil {
			return nil, fmt.Errorf("%w: attribute %q: %w", ErrMalformedItem, AttrData, err)
		}
	default:
		return nil, fmt.Errorf("%w: attribute %q must be a string (S) or, compressed, a binary (B)", ErrMalformedItem, AttrData)
	}
	return json.RawMessage(data), nil
}

// checkDataJSON is the JSON check of an item's data.
func checkDataJSON(data []byte) error {
	if !json.Valid(data) {
		return fmt.Errorf("%w: attribute %q: not valid JSON", ErrMalformedItem, AttrData)
	}
	return nil
}

// TTLOf reads an item's expiry, the epoch seconds in its AttrTTL number;
// ok is false when it has none.
func TTLOf(item map[string]types.AttributeValue) (ttl int64, ok bool) {
	n, ok := item[AttrTTL].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	ttl, err := strconv.ParseInt(n.Value, 10, 64)
	return ttl, err == nil
}
