package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/internal/ghurls"
)

// ghurlsFixtures are the webhooks of schema/internal/ghurls/testdata as
// events, with their names.
func ghurlsFixtures(t testing.TB) (names []string, events []schema.Event) {
	t.Helper()
	files, err := filepath.Glob("internal/ghurls/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no ghurls fixtures (%v)", err)
	}
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tm := time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)
		e := schema.Event{ID: "d-" + strconv.Itoa(i), Source: "https://github.com/o", Type: schema.WorkflowJobTypePrefix + "queued",
			Time: tm, Data: bytes.TrimSpace(raw), Subject: "github/1/job/" + strconv.Itoa(i), RecordedAt: &tm}
		names, events = append(names, filepath.Base(f)), append(events, e)
	}
	return names, events
}

// TestItemGitHubURLs: a webhook's item is stored with its derivable URLs
// elided (dataenc ghurls1+...), is smaller than the item of the format
// before (DataCompressedKeepURLs), and decodes to the exact bytes. A real
// full-size webhook fits one write unit.
func TestItemGitHubURLs(t *testing.T) {
	var events []schema.Event
	var names []string
	for _, e := range webhookEvents(t) {
		names, events = append(names, "ingest/testdata/github "+e.ID), append(events, e)
	}
	n, ev := ghurlsFixtures(t)
	names, events = append(names, n...), append(events, ev...)
	for i, e := range events {
		t.Run(names[i], func(t *testing.T) {
			before, err := schema.ItemEncoded(e, 14*24*time.Hour, schema.DataCompressedKeepURLs)
			if err != nil {
				t.Fatal(err)
			}
			after, err := schema.Item(e, 14*24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			enc, _ := after[schema.AttrDataEncoding].(*types.AttributeValueMemberS)
			if enc == nil || !strings.HasPrefix(enc.Value, schema.EncodingGitHubURLsPrefix) {
				t.Fatalf("dataenc = %v, want %s...", after[schema.AttrDataEncoding], schema.EncodingGitHubURLsPrefix)
			}
			sb, sa := schema.ItemSize(before), schema.ItemSize(after)
			t.Logf("data %d bytes: item %d bytes (%d WCU) with URLs, %d bytes (%d WCU) elided", len(e.Data), sb, schema.WriteUnits(sb), sa, schema.WriteUnits(sa))
			if sa >= sb {
				t.Errorf("elided item is %d bytes, not smaller than %d", sa, sb)
			}
			if strings.HasPrefix(names[i], "ingest/") && schema.WriteUnits(sa) > 1 {
				t.Errorf("item of a real webhook is %d bytes, more than one write unit", sa)
			}
			got, err := schema.EventFromItem(after)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, e.Data) {
				t.Fatalf("data changed:\n got %s\nwant %s", got.Data, e.Data)
			}
			want, err1 := schema.ContentHash(e)
			have, err2 := schema.ContentHash(got)
			if err1 != nil || err2 != nil || have != want {
				t.Fatalf("content hash %s (%v), want %s (%v)", have, err2, want, err1)
			}
		})
	}
}

// TestItemGitHubURLsFallback: data without derivable URLs is stored as
// before, and every encoding ever written keeps decoding.
func TestItemGitHubURLsFallback(t *testing.T) {
	hook := webhookEvents(t)[0]
	pad := strings.Repeat("x", 2*schema.CompressAboveBytes)
	tests := []struct {
		name    string
		data    string
		wantEnc string
	}{
		{"JSON without a repository", `{"pad":"` + pad + `","url":"https://api.github.com/repos/o/r"}`, schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary)},
		{"no URL equals its derivation", `{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/other","pad":"` + pad + `"}}`, schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary)},
		{"one URL equals its derivation", `{"repository":{"full_name":"o/r","url":"https://api.github.com/repos/o/r","pad":"` + pad + `"}}`, schema.EncodingGitHubURLsPrefix + schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary)},
		{"a webhook", string(hook.Data), schema.EncodingGitHubURLsPrefix + schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := hook
			e.Data = json.RawMessage(tt.data)
			item, err := schema.Item(e, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := item[schema.AttrDataEncoding].(*types.AttributeValueMemberS).Value; got != tt.wantEnc {
				t.Fatalf("dataenc = %q, want %q", got, tt.wantEnc)
			}
			back, err := schema.EventFromItem(item)
			if err != nil || !bytes.Equal(back.Data, e.Data) {
				t.Fatalf("round trip: %v", err)
			}
		})
	}
}

// TestEventFromItemGitHubURLsErrors: an elided frame that does not restore
// is a malformed item naming why.
func TestEventFromItemGitHubURLsErrors(t *testing.T) {
	hook := webhookEvents(t)[0]
	good, err := schema.Item(hook, 0)
	if err != nil {
		t.Fatal(err)
	}
	enc := good[schema.AttrDataEncoding].(*types.AttributeValueMemberS).Value
	dicts, err := os.ReadFile("zdict/" + strconv.Itoa(schema.CurrentDictionary) + ".zdict")
	if err != nil {
		t.Fatal(err)
	}
	w, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true), zstd.WithEncoderDict(dicts))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, elided, want string
	}{
		{"no header", `{"a":1}`, `attribute "data": ghurls: no header`},
		{"marker without its derivation", "\x01\x01" + `{"repository":{"url":"` + "\x01" + `"}}`, `attribute "data": ghurls: byte 24: field "url": an input of its derivation is missing`},
		{"marker of an unknown alternative", "a\x01w\x01" + `{"repository":{"full_name":"o/r","url":"` + "\x019" + `"}}`, `attribute "data": ghurls: byte 44: field "url" has no derivation 9`},
		{"not JSON", "a\x01w\x01{", `attribute "data": ghurls: not JSON text`},
		{"a marker where no field has derivations", "a\x01w\x01" + `{"pad":"` + "\x01" + `"}`, `attribute "data": not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			item := map[string]types.AttributeValue{}
			for k, v := range good {
				item[k] = v
			}
			item[schema.AttrData] = &types.AttributeValueMemberB{Value: w.EncodeAll([]byte(tt.elided), nil)}
			item[schema.AttrDataEncoding] = &types.AttributeValueMemberS{Value: enc}
			_, err := schema.EventFromItem(item)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// unitsWorkloads are the workloads of BenchmarkItemUnits: the jobs-only
// stream and the default mix, with GitHub-size webhooks.
var unitsWorkloads = []struct {
	name string
	cfg  simulate.Config
}{
	{"jobs", simulate.Config{Events: 2000, Seed: 7, Mix: simulate.Mix{Jobs: 1}, Rate: 1, GitHubPayloads: simulate.PayloadsFull}},
	{"default-mix", simulate.Config{Events: 2000, Seed: 7, Rate: 100, GitHubPayloads: simulate.PayloadsFull}},
}

// BenchmarkItemUnits measures, side by side on the same events, the item
// size and the write units (schema.ItemSize, schema.WriteUnits) per event
// of four formats of data:
//
//	before:        the format before ghurls1 (DataCompressedKeepURLs:
//	               zstd with dictionary 32769 above one write unit)
//	elided-32769:  URLs elided, then dictionary 32769 (the codec alone)
//	keep-32770:    URLs kept, dictionary 32770 (the new dictionary alone)
//	after:         schema.Item now (URLs elided, dictionary 32770)
//
// per event over the whole stream, and per GitHub webhook (the events whose
// item is compressed). Run it once:
//
//	go test ./schema -run '^$' -bench ItemUnits -benchtime 1x
func BenchmarkItemUnits(b *testing.B) {
	withDict := func(id int) *zstd.Encoder {
		d, err := os.ReadFile("zdict/" + strconv.Itoa(id) + ".zdict")
		if err != nil {
			b.Fatal(err)
		}
		w, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithSingleSegment(true), zstd.WithEncoderDict(d))
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	old, cur := withDict(schema.KeepURLsDictionary), withDict(schema.CurrentDictionary)
	formats := []string{"before", "elided-32769", "keep-32770", "after"}
	for _, wl := range unitsWorkloads {
		b.Run(wl.name, func(b *testing.B) {
			events, _, err := simulate.Generate(wl.cfg)
			if err != nil {
				b.Fatal(err)
			}
			type sum struct{ n, bytes, units, oneUnit int }
			var all, hooks [4]sum
			for range b.N {
				all, hooks = [4]sum{}, [4]sum{}
				for _, e := range events {
					at := e.Time
					e.RecordedAt = &at
					before, err := schema.ItemEncoded(e, 14*24*time.Hour, schema.DataCompressedKeepURLs)
					if err != nil {
						b.Fatal(err)
					}
					after, err := schema.Item(e, 14*24*time.Hour)
					if err != nil {
						b.Fatal(err)
					}
					// As the Appender writes them: with the content hash.
					hash, err := schema.ContentHash(e)
					if err != nil {
						b.Fatal(err)
					}
					before[schema.AttrContentHash] = &types.AttributeValueMemberS{Value: hash}
					after[schema.AttrContentHash] = &types.AttributeValueMemberS{Value: hash}
					sizes := [4]int{schema.ItemSize(before), 0, 0, schema.ItemSize(after)}
					_, compressed := before[schema.AttrDataEncoding]
					if compressed {
						// The item with another frame: the data attribute's
						// size changes by the frame's, dataenc by its value's.
						frameB := len(before[schema.AttrData].(*types.AttributeValueMemberB).Value)
						encB := len(before[schema.AttrDataEncoding].(*types.AttributeValueMemberS).Value)
						base := sizes[0] - frameB - encB
						data := []byte(e.Data)
						if elided, ok := ghurls.Elide(data); ok {
							sizes[1] = base + len(old.EncodeAll(elided, nil)) + len(schema.EncodingGitHubURLsPrefix+"zstd+dict:32769")
						} else {
							sizes[1] = sizes[0]
						}
						sizes[2] = base + len(cur.EncodeAll(data, nil)) + len("zstd+dict:32770")
					} else {
						sizes[1], sizes[2] = sizes[0], sizes[0]
					}
					for i, s := range sizes {
						u := schema.WriteUnits(s)
						add := func(x *sum) {
							x.n++
							x.bytes += s
							x.units += u
							if u == 1 {
								x.oneUnit++
							}
						}
						add(&all[i])
						if compressed {
							add(&hooks[i])
						}
					}
				}
			}
			for i, f := range formats {
				b.ReportMetric(float64(all[i].bytes)/float64(all[i].n), f+"-B/event")
				b.ReportMetric(float64(all[i].units)/float64(all[i].n), f+"-WCU/event")
			}
			for i, f := range formats {
				h := hooks[i]
				if h.n == 0 {
					continue
				}
				b.ReportMetric(float64(h.bytes)/float64(h.n), f+"-B/webhook")
				b.ReportMetric(float64(h.units)/float64(h.n), f+"-WCU/webhook")
				b.ReportMetric(100*float64(h.oneUnit)/float64(h.n), f+"-%webhooks≤1KB")
			}
			b.Logf("%s: %d events, %d compressed (webhooks); per event: before %.0f B %.3f WCU, after %.0f B %.3f WCU; per webhook: before %.0f B %.3f WCU, after %.0f B %.3f WCU, %.1f%% of them 1 WCU",
				wl.name, all[0].n, hooks[0].n,
				float64(all[0].bytes)/float64(all[0].n), float64(all[0].units)/float64(all[0].n),
				float64(all[3].bytes)/float64(all[3].n), float64(all[3].units)/float64(all[3].n),
				float64(hooks[0].bytes)/float64(max(1, hooks[0].n)), float64(hooks[0].units)/float64(max(1, hooks[0].n)),
				float64(hooks[3].bytes)/float64(max(1, hooks[3].n)), float64(hooks[3].units)/float64(max(1, hooks[3].n)),
				100*float64(hooks[3].oneUnit)/float64(max(1, hooks[3].n)))
		})
	}
}

// BenchmarkEventFromItemWebhook: decoding a full-size webhook's item, in
// the format before ghurls1 and now.
func BenchmarkEventFromItemWebhook(b *testing.B) {
	events, _, err := simulate.Generate(unitsWorkloads[0].cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, enc := range []schema.DataEncoding{schema.DataCompressedKeepURLs, schema.DataCompressed} {
		var items []map[string]types.AttributeValue
		for _, e := range events {
			if !strings.HasPrefix(e.Type, schema.WorkflowJobTypePrefix) {
				continue
			}
			at := e.Time
			e.RecordedAt = &at
			item, err := schema.ItemEncoded(e, 0, enc)
			if err != nil {
				b.Fatal(err)
			}
			items = append(items, item)
			if len(items) == 200 {
				break
			}
		}
		name := map[schema.DataEncoding]string{schema.DataCompressedKeepURLs: "before", schema.DataCompressed: "after"}[enc]
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				if _, err := schema.EventFromItem(items[i%len(items)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// ExampleEncodingGitHubURLsPrefix shows the encoding a webhook's item
// records.
func ExampleEncodingGitHubURLsPrefix() {
	fmt.Println(schema.EncodingGitHubURLsPrefix + schema.EncodingZstdDictPrefix + strconv.Itoa(schema.CurrentDictionary))
	// Output: ghurls1+zstd+dict:32770
}
