package streamrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/streamfold/streamfold/schema"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// delivered is one record as the handler saw it.
type delivered struct{ seq, key string }

// recorder is a handler that remembers every invocation; respond decides
// the outcome of invocation n (0-based).
type recorder struct {
	mu      sync.Mutex
	calls   [][]delivered
	handled []delivered // records the runner may consider dealt with (success or prefix before the lowest failure)
	respond func(n int, batch []delivered) (events.DynamoDBEventResponse, error)
}

func (r *recorder) handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	batch := make([]delivered, len(ev.Records))
	for i, rec := range ev.Records {
		batch[i] = delivered{seq: rec.Change.SequenceNumber, key: rec.Change.Keys["id"].String()}
	}
	r.mu.Lock()
	n := len(r.calls)
	r.calls = append(r.calls, batch)
	r.mu.Unlock()
	var resp events.DynamoDBEventResponse
	var err error
	if r.respond != nil {
		resp, err = r.respond(n, batch)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil:
	case len(resp.BatchItemFailures) == 0:
		r.handled = append(r.handled, batch...)
	default:
		lowest := len(batch)
		for _, f := range resp.BatchItemFailures {
			if i := slices.IndexFunc(batch, func(d delivered) bool { return d.seq == f.ItemIdentifier }); i >= 0 && i < lowest {
				lowest = i
			}
		}
		r.handled = append(r.handled, batch[:lowest]...)
	}
	return resp, err
}

func (r *recorder) keys(batch []delivered) []string {
	out := make([]string, len(batch))
	for i, d := range batch {
		out[i] = d.key
	}
	return out
}

func (r *recorder) snapshot() (calls [][]delivered, handled []delivered) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls), slices.Clone(r.handled)
}

// poisonLog collects OnPoison calls.
type poisonLog struct {
	mu    sync.Mutex
	recs  []events.DynamoDBEventRecord
	cause []error
	err   error
}

func (p *poisonLog) onPoison(ctx context.Context, rec events.DynamoDBEventRecord, cause error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.recs = append(p.recs, rec)
	p.cause = append(p.cause, cause)
	return nil
}

func (p *poisonLog) seqs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.recs {
		out = append(out, r.Change.SequenceNumber)
	}
	return out
}

func testConfig(p *poisonLog, mod func(*Config)) Config {
	cfg := Config{
		StreamARN: fakeARN, Consumer: "c",
		PollInterval: 2 * time.Millisecond, DescribeInterval: 20 * time.Millisecond,
		UntilCaughtUp: true,
		OnPoison:      p.onPoison,
		Logger:        slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(&cfg)
	}
	return cfg
}

func newTestRunner(t *testing.T, api StreamsAPI, cps CheckpointStore, h Handler, cfg Config) *Runner {
	t.Helper()
	r, err := New(api, cps, h, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.retryBase, r.retryMax = time.Millisecond, 4*time.Millisecond
	return r
}

func runFor(t *testing.T, r *Runner, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err := r.Run(ctx)
	if ctx.Err() != nil {
		t.Fatalf("Run did not finish within %s (stats %+v)", d, r.Stats())
	}
	return err
}

func mustRun(t *testing.T, r *Runner) {
	t.Helper()
	if err := runFor(t, r, 10*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func keysOf(shard string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s/%d", shard, i))
	}
	return out
}

func handledKeys(h []delivered) []string {
	out := make([]string, len(h))
	for i, d := range h {
		out[i] = d.key
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	ok := func(mod func(*Config)) Config {
		c := Config{StreamARN: "arn", Consumer: "c", OnPoison: func(context.Context, events.DynamoDBEventRecord, error) error { return nil }}
		c.SetDefaults()
		if mod != nil {
			mod(&c)
		}
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"valid", ok(nil), ""},
		{"no stream", ok(func(c *Config) { c.StreamARN = "" }), "streamrun: Config.StreamARN: is required"},
		{"no consumer", ok(func(c *Config) { c.Consumer = "" }), "streamrun: Config.Consumer: is required"},
		{"batch 0", ok(func(c *Config) { c.BatchSize = 0 }), "streamrun: Config.BatchSize: must be between 1 and 10000, got 0"},
		{"batch too big", ok(func(c *Config) { c.BatchSize = 10001 }), "streamrun: Config.BatchSize: must be between 1 and 10000, got 10001"},
		{"window negative", ok(func(c *Config) { c.BatchWindow = -time.Second }), "streamrun: Config.BatchWindow: must be between 0s and 5m0s, got -1s"},
		{"window too long", ok(func(c *Config) { c.BatchWindow = 301 * time.Second }), "streamrun: Config.BatchWindow: must be between 0s and 5m0s, got 5m1s"},
		{"retries negative", ok(func(c *Config) { c.MaxRetryAttempts = -1 }), "streamrun: Config.MaxRetryAttempts: must be between 0 and 10000, got -1"},
		{"retries too many", ok(func(c *Config) { c.MaxRetryAttempts = 10001 }), "streamrun: Config.MaxRetryAttempts: must be between 0 and 10000, got 10001"},
		{"poll", ok(func(c *Config) { c.PollInterval = -time.Millisecond }), "streamrun: Config.PollInterval: must be positive, got -1ms"},
		{"describe", ok(func(c *Config) { c.DescribeInterval = -time.Second }), "streamrun: Config.DescribeInterval: must be positive, got -1s"},
		{"no poison", ok(func(c *Config) { c.OnPoison = nil }), "streamrun: Config.OnPoison: is required (records that exhaust their retries go there)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	// New applies the defaults first and reports the same messages.
	if _, err := New(newFake(), newMem(), func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{}, nil
	}, Config{StreamARN: "arn", Consumer: "c"}); err == nil || err.Error() != "streamrun: Config.OnPoison: is required (records that exhaust their retries go there)" {
		t.Fatalf("New without OnPoison: %v", err)
	}
	var c Config
	c.SetDefaults()
	if c.BatchSize != 100 || c.MaxRetryAttempts != 3 || c.PollInterval != 250*time.Millisecond ||
		c.DescribeInterval != 10*time.Second || c.Region != "us-east-1" || c.BatchWindow != 0 || c.Logger == nil {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestCmpSeq(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"100", "100", 0},
		{"000000000000000010004", "10004", 0},
		{"000000000000000010004", "9999", 1},
		{"4900000000000000000012", "49000000000000000000113", -1},
		{"123", "124", -1},
	}
	for _, tt := range tests {
		if got := streamimage.CompareSeq(tt.a, tt.b); got != tt.want {
			t.Errorf("streamimage.CompareSeq(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCheckpointAttributesMatchSchema(t *testing.T) {
	spec, ok := schema.TableSpec(schema.TableCheckpoints)
	if !ok || spec.Hash.Name != AttrConsumer || spec.Range == nil || spec.Range.Name != AttrShardID {
		t.Fatalf("checkpoints table spec %+v does not match (%s, %s)", spec, AttrConsumer, AttrShardID)
	}
}

// TestLineage: a child is read only after its parent is done, a
// grandchild after the child; a shard whose parent left the stream is
// read at once; DescribeStream is paginated.
func TestLineage(t *testing.T) {
	f := newFake()
	f.pageSize = 2 // 5 shards: three pages
	f.perCall = 7
	f.addShard("p", "")
	f.addShard("x", "")
	f.addShard("c", "p")
	f.addShard("g", "c")
	f.addShard("o", "trimmed-away")
	f.put("p", 60)
	f.put("x", 40)
	f.put("c", 30)
	f.put("g", 10)
	f.put("o", 5)
	f.closeShard("p")
	f.closeShard("c")
	f.closeShard("o")

	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		time.Sleep(time.Millisecond) // give other shards a chance to run ahead
		return events.DynamoDBEventResponse{}, nil
	}}
	p := &poisonLog{}
	store := newMem()
	r := newTestRunner(t, f, store, rec.handle, testConfig(p, func(c *Config) { c.BatchSize = 5 }))
	mustRun(t, r)

	_, handled := rec.snapshot()
	pos := map[string]int{}
	for i, d := range handled {
		if _, dup := pos[d.key]; dup {
			t.Fatalf("record %s handed twice", d.key)
		}
		pos[d.key] = i
	}
	for _, sh := range []struct {
		name string
		n    int
	}{{"p", 60}, {"x", 40}, {"c", 30}, {"g", 10}, {"o", 5}} {
		for i, k := range keysOf(sh.name, 0, sh.n) {
			if _, ok := pos[k]; !ok {
				t.Fatalf("record %s never handed", k)
			}
			if i > 0 && pos[k] < pos[fmt.Sprintf("%s/%d", sh.name, i-1)] {
				t.Fatalf("record %s handed before its predecessor", k)
			}
		}
	}
	if pos["c/0"] < pos["p/59"] {
		t.Fatalf("child record c/0 (at %d) handed before the parent's last record p/59 (at %d)", pos["c/0"], pos["p/59"])
	}
	if pos["g/0"] < pos["c/29"] {
		t.Fatalf("grandchild record g/0 handed before the child's last record")
	}
	if f.describeCalls < 3 {
		t.Fatalf("DescribeStream called %d times, want pagination", f.describeCalls)
	}
	for _, id := range []string{"p", "c", "o"} {
		if cp := store.get("c", id); !cp.Done {
			t.Fatalf("closed shard %s: checkpoint %+v, want Done", id, cp)
		}
	}
	if cp := store.get("c", "x"); cp.Done || cp.SequenceNumber == "" {
		t.Fatalf("open shard x: checkpoint %+v", cp)
	}
	st := r.Stats()
	if st.ShardsDone != 3 || st.ShardsOpen != 2 || st.Records != 145 || st.Poisoned != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestPartialBatchResponse: the batch is retried from the lowest reported
// sequence number, compared as a number ("98" < "100", though "100" < "98"
// as strings); records before it are not re-sent, records after it are.
func TestPartialBatchResponse(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 10) // 95..104
	if seqs[3] != "98" || seqs[5] != "100" {
		t.Fatalf("unexpected sequence numbers %v", seqs)
	}
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n == 0 {
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
				{ItemIdentifier: "100"}, {ItemIdentifier: "98"},
			}}, nil
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	p := &poisonLog{}
	store := newMem()
	r := newTestRunner(t, f, store, rec.handle, testConfig(p, func(c *Config) { c.BatchSize = 10 }))
	mustRun(t, r)
	calls, _ := rec.snapshot()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2: %v", len(calls), calls)
	}
	if got, want := rec.keys(calls[1]), keysOf("s", 3, 10); !slices.Equal(got, want) {
		t.Fatalf("retry got %v, want %v", got, want)
	}
	if cp := store.get("c", "s"); cp.SequenceNumber != "104" {
		t.Fatalf("checkpoint %+v, want 104", cp)
	}
	if st := r.Stats(); st.Retries != 1 || st.Batches != 2 || st.Records != 17 {
		t.Fatalf("stats %+v", st)
	}
}

// TestCheckpointBeforeLowestFailure: after a partial failure the records
// before the lowest failing one are checkpointed at once.
func TestCheckpointBeforeLowestFailure(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 10)
	store := newMem()
	var seen string
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n == 0 {
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seqs[6]}}}, nil
		}
		if n == 1 {
			seen = store.get("c", "s").SequenceNumber
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	r := newTestRunner(t, f, store, rec.handle, testConfig(&poisonLog{}, func(c *Config) { c.BatchSize = 10 }))
	mustRun(t, r)
	if seen != seqs[5] {
		t.Fatalf("checkpoint during the retry = %q, want %q", seen, seqs[5])
	}
}

// TestWholeBatchRetry: a handler error retries the whole batch.
func TestWholeBatchRetry(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	f.put("s", 8)
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n < 2 {
			return events.DynamoDBEventResponse{}, errBoom
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	p := &poisonLog{}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(p, nil))
	mustRun(t, r)
	calls, handled := rec.snapshot()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	for _, c := range calls {
		if !slices.Equal(rec.keys(c), keysOf("s", 0, 8)) {
			t.Fatalf("call with %v, want the whole batch", rec.keys(c))
		}
	}
	if !slices.Equal(handledKeys(handled), keysOf("s", 0, 8)) || len(p.seqs()) != 0 {
		t.Fatalf("handled %v, poisoned %v", handledKeys(handled), p.seqs())
	}
	if st := r.Stats(); st.Retries != 2 || st.Bisections != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestUnknownItemIdentifier: an item failure that is not in the batch
// fails the whole batch, as in Lambda.
func TestUnknownItemIdentifier(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	f.put("s", 5)
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n == 0 {
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
				{ItemIdentifier: b[3].seq}, {ItemIdentifier: "12345678901234567890"},
			}}, nil
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, nil))
	mustRun(t, r)
	calls, _ := rec.snapshot()
	if len(calls) != 2 || !slices.Equal(rec.keys(calls[1]), keysOf("s", 0, 5)) {
		t.Fatalf("calls %v, want the whole batch twice", calls)
	}
}

// TestBisection: with BisectOnError a failing batch is halved down to the
// bad record, which alone exhausts its retries and is poisoned; every
// other record is handled exactly once successfully.
func TestBisection(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 16)
	bad := seqs[5]
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if slices.ContainsFunc(b, func(d delivered) bool { return d.seq == bad }) {
			return events.DynamoDBEventResponse{}, errBoom
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	p := &poisonLog{}
	store := newMem()
	r := newTestRunner(t, f, store, rec.handle, testConfig(p, func(c *Config) {
		c.BatchSize, c.BisectOnError, c.MaxRetryAttempts = 16, true, 2
	}))
	mustRun(t, r)
	calls, handled := rec.snapshot()
	var sizes []int
	for _, c := range calls {
		sizes = append(sizes, len(c))
	}
	// 16 fails -> 8 (0-7) fails -> 4 (0-3) ok, 4 (4-7) fails -> 2 (4-5) fails
	// -> 1 (4) ok, 1 (5) fails 3 times -> poisoned; 2 (6-7) ok; 8 (8-15) ok.
	if want := []int{16, 8, 4, 4, 2, 1, 1, 1, 1, 2, 8}; !slices.Equal(sizes, want) {
		t.Fatalf("batch sizes %v, want %v", sizes, want)
	}
	want := slices.Concat(keysOf("s", 0, 5), keysOf("s", 6, 16))
	if got := handledKeys(handled); !slices.Equal(got, want) {
		t.Fatalf("handled %v, want %v", got, want)
	}
	if got := p.seqs(); !slices.Equal(got, []string{bad}) || !errors.Is(p.cause[0], errBoom) {
		t.Fatalf("poisoned %v (%v), want [%s] with the handler error", got, p.cause, bad)
	}
	if st := r.Stats(); st.Bisections != 4 || st.Poisoned != 1 || st.Retries != 2 {
		t.Fatalf("stats %+v", st)
	}
	if cp := store.get("c", "s"); cp.SequenceNumber != seqs[15] {
		t.Fatalf("checkpoint %+v", cp)
	}
}

// TestPoisonAfterMaxRetries: a record the handler always reports failed is
// handed 1+MaxRetryAttempts times, then given to OnPoison exactly once;
// the shard goes on and a restart re-delivers nothing.
func TestPoisonAfterMaxRetries(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 10)
	bad := seqs[4]
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if slices.ContainsFunc(b, func(d delivered) bool { return d.seq == bad }) {
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: bad}}}, nil
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	p := &poisonLog{}
	store := newMem()
	r := newTestRunner(t, f, store, rec.handle, testConfig(p, func(c *Config) { c.BatchSize = 10 }))
	mustRun(t, r)
	calls, handled := rec.snapshot()
	// first call: all 10; 3 retries from the bad record; then the rest.
	wantCalls := [][]string{keysOf("s", 0, 10), keysOf("s", 4, 10), keysOf("s", 4, 10), keysOf("s", 4, 10), keysOf("s", 5, 10)}
	if len(calls) != len(wantCalls) {
		t.Fatalf("calls %v", calls)
	}
	for i, c := range calls {
		if !slices.Equal(rec.keys(c), wantCalls[i]) {
			t.Fatalf("call %d: %v, want %v", i, rec.keys(c), wantCalls[i])
		}
	}
	if got := p.seqs(); !slices.Equal(got, []string{bad}) {
		t.Fatalf("poisoned %v, want exactly [%s]", got, bad)
	}
	if p.recs[0].Change.Keys["id"].String() != "s/4" || p.recs[0].EventSourceArn != fakeARN || p.recs[0].AWSRegion != "us-east-1" {
		t.Fatalf("poisoned record %+v", p.recs[0])
	}
	if !strings.Contains(p.cause[0].Error(), bad) {
		t.Fatalf("cause %v does not name the record", p.cause[0])
	}
	if want := slices.Concat(keysOf("s", 0, 4), keysOf("s", 5, 10)); !slices.Equal(handledKeys(handled), want) {
		t.Fatalf("handled %v", handledKeys(handled))
	}
	if cp := store.get("c", "s"); cp.SequenceNumber != seqs[9] {
		t.Fatalf("checkpoint %+v", cp)
	}
	// restart: nothing new
	rec2 := &recorder{}
	r2 := newTestRunner(t, f, store, rec2.handle, testConfig(p, nil))
	mustRun(t, r2)
	if calls, _ := rec2.snapshot(); len(calls) != 0 || len(p.seqs()) != 1 {
		t.Fatalf("restart re-delivered %v, poisoned %v", calls, p.seqs())
	}
}

// TestPoisonErrorStops: if OnPoison fails the runner stops with its error
// and does not checkpoint past the record.
func TestPoisonErrorStops(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	seqs := f.put("s", 5)
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: seqs[2]}}}, nil
	}}
	dlqDown := errors.New("dead-letter table unavailable")
	p := &poisonLog{err: dlqDown}
	store := newMem()
	r := newTestRunner(t, f, store, rec.handle, testConfig(p, func(c *Config) { c.MaxRetryAttempts = 1 }))
	err := runFor(t, r, 10*time.Second)
	if !errors.Is(err, dlqDown) {
		t.Fatalf("Run = %v, want the OnPoison error", err)
	}
	if cp := store.get("c", "s"); cp.SequenceNumber != seqs[1] {
		t.Fatalf("checkpoint %+v, want just before the poisoned record (%s)", cp, seqs[1])
	}
}

// TestHandlerPanic: a panic counts as a handler error.
func TestHandlerPanic(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	f.put("s", 3)
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n == 0 {
			panic("kaputt")
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, nil))
	mustRun(t, r)
	if calls, handled := rec.snapshot(); len(calls) != 2 || len(handled) != 3 {
		t.Fatalf("calls %v handled %v", calls, handled)
	}
}

// TestExpiredIterator: iterators expired in the middle of reading are
// re-acquired after the last record read: nothing lost, nothing repeated.
func TestExpiredIterator(t *testing.T) {
	for _, window := range []time.Duration{0, 30 * time.Millisecond} {
		t.Run(fmt.Sprint("window=", window), func(t *testing.T) {
			f := newFake()
			f.perCall = 30
			f.addShard("s", "")
			f.put("s", 300)
			rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
				if n == 1 || n == 4 {
					f.expireIterators()
				}
				return events.DynamoDBEventResponse{}, nil
			}}
			r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, func(c *Config) {
				c.BatchSize, c.BatchWindow = 50, window
			}))
			mustRun(t, r)
			_, handled := rec.snapshot()
			if got := handledKeys(handled); !slices.Equal(got, keysOf("s", 0, 300)) {
				t.Fatalf("handled %d records, want s/0..s/299 in order exactly once: %v", len(got), got)
			}
			if st := r.Stats(); st.ExpiredIterators != 2 {
				t.Fatalf("stats %+v, want 2 expired iterators", st)
			}
		})
	}
}

// TestIteratorRefreshedBeforeExpiry: an iterator held longer than its
// maximum age (a slow handler) is re-acquired before it expires.
func TestIteratorRefreshedBeforeExpiry(t *testing.T) {
	f := newFake()
	f.perCall = 10
	// Times are wide (a 200 ms margin between a refresh and an expiry) so
	// that a stall of a loaded machine does not expire an iterator.
	f.iterTTL = 400 * time.Millisecond
	f.addShard("s", "")
	f.put("s", 50)
	rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		time.Sleep(500 * time.Millisecond)
		return events.DynamoDBEventResponse{}, nil
	}}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, nil))
	r.iteratorMaxAge = 200 * time.Millisecond
	mustRun(t, r)
	_, handled := rec.snapshot()
	if !slices.Equal(handledKeys(handled), keysOf("s", 0, 50)) {
		t.Fatalf("handled %v", handledKeys(handled))
	}
	if st := r.Stats(); st.ExpiredIterators != 0 || f.iteratorCalls < 5 {
		t.Fatalf("stats %+v, GetShardIterator calls %d: want proactive refreshes and no expiry", st, f.iteratorCalls)
	}
}

// TestTrimmed: a position older than the trim horizon restarts the shard
// at TRIM_HORIZON, loudly counted, without re-sending handled records.
func TestTrimmed(t *testing.T) {
	t.Run("checkpoint trimmed", func(t *testing.T) {
		f := newFake()
		f.addShard("s", "")
		seqs := f.put("s", 100)
		f.trimTo("s", 40)
		store := newMem()
		_ = store.Save(context.Background(), "c", Checkpoint{ShardID: "s", SequenceNumber: seqs[10]})
		rec := &recorder{}
		r := newTestRunner(t, f, store, rec.handle, testConfig(&poisonLog{}, nil))
		mustRun(t, r)
		_, handled := rec.snapshot()
		if !slices.Equal(handledKeys(handled), keysOf("s", 40, 100)) {
			t.Fatalf("handled %v", handledKeys(handled))
		}
		if r.Stats().Trimmed != 1 || !slices.Equal(f.iteratorTypes, []string{"AFTER_SEQUENCE_NUMBER", "TRIM_HORIZON"}) {
			t.Fatalf("stats %+v, iterators %v", r.Stats(), f.iteratorTypes)
		}
	})
	t.Run("trimmed while reading", func(t *testing.T) {
		f := newFake()
		f.perCall = 10
		f.addShard("s", "")
		f.put("s", 100)
		rec := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
			if n == 0 {
				f.trimTo("s", 5) // everything read so far: nothing lost
			}
			if n == 1 {
				f.trimTo("s", 50) // records 20..49 are lost
			}
			return events.DynamoDBEventResponse{}, nil
		}}
		r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, nil))
		mustRun(t, r)
		_, handled := rec.snapshot()
		if want := slices.Concat(keysOf("s", 0, 20), keysOf("s", 50, 100)); !slices.Equal(handledKeys(handled), want) {
			t.Fatalf("handled %v, want %v", handledKeys(handled), want)
		}
		if r.Stats().Trimmed != 1 {
			t.Fatalf("stats %+v", r.Stats())
		}
	})
}

// TestRestartFromCheckpoint: a runner stopped midway and a new one with
// the same consumer together deliver everything; the new one starts right
// after the checkpoint; a third delivers nothing.
func TestRestartFromCheckpoint(t *testing.T) {
	f := newFake()
	f.perCall = 10
	f.addShard("s", "")
	f.put("s", 100)
	store := newMem()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec1 := &recorder{respond: func(n int, b []delivered) (events.DynamoDBEventResponse, error) {
		if n == 2 {
			cancel()
		}
		return events.DynamoDBEventResponse{}, nil
	}}
	r1 := newTestRunner(t, f, store, rec1.handle, testConfig(&poisonLog{}, func(c *Config) { c.BatchSize = 10; c.UntilCaughtUp = false }))
	if err := r1.Run(ctx); err != nil {
		t.Fatalf("Run after cancel = %v, want nil", err)
	}
	_, h1 := rec1.snapshot()
	if !slices.Equal(handledKeys(h1), keysOf("s", 0, 30)) {
		t.Fatalf("first runner handled %v", handledKeys(h1))
	}
	cp := store.get("c", "s")
	rec2 := &recorder{}
	r2 := newTestRunner(t, f, store, rec2.handle, testConfig(&poisonLog{}, nil))
	mustRun(t, r2)
	_, h2 := rec2.snapshot()
	if len(h2) == 0 || streamimage.CompareSeq(h2[0].seq, cp.SequenceNumber) <= 0 {
		t.Fatalf("second runner started at %s, checkpoint %s", h2[0].seq, cp.SequenceNumber)
	}
	if got := handledKeys(slices.Concat(h1, h2)); !slices.Equal(got, keysOf("s", 0, 100)) {
		t.Fatalf("together handled %v", got)
	}
	rec3 := &recorder{}
	mustRun(t, newTestRunner(t, f, store, rec3.handle, testConfig(&poisonLog{}, nil)))
	if calls, _ := rec3.snapshot(); len(calls) != 0 {
		t.Fatalf("third runner delivered %v", calls)
	}
	// A done shard is not even opened again.
	f.closeShard("s")
	mustRun(t, newTestRunner(t, f, store, rec3.handle, testConfig(&poisonLog{}, nil)))
	if !store.get("c", "s").Done {
		t.Fatalf("closed shard not Done")
	}
	before := f.iteratorCalls
	mustRun(t, newTestRunner(t, f, store, rec3.handle, testConfig(&poisonLog{}, nil)))
	if f.iteratorCalls != before {
		t.Fatalf("a Done shard was opened again")
	}
}

// TestTransientErrors: throttling and 5xx errors are retried.
func TestTransientErrors(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	f.put("s", 20)
	f.describeErrs = []error{apiErr("InternalServerError")}
	f.getRecordsErrs = []error{apiErr("ProvisionedThroughputExceededException"), apiErr("LimitExceededException")}
	rec := &recorder{}
	r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, nil))
	mustRun(t, r)
	if _, h := rec.snapshot(); !slices.Equal(handledKeys(h), keysOf("s", 0, 20)) {
		t.Fatalf("handled %v", handledKeys(h))
	}
	// A permanent error stops the runner.
	f.getRecordsErrs = []error{apiErr("AccessDeniedException")}
	r = newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, func(c *Config) { c.Consumer = "other" }))
	if err := runFor(t, r, 10*time.Second); err == nil || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Fatalf("Run = %v, want the AccessDeniedException", err)
	}
}

// TestBatchWindow: with a window, several GetRecords fill one batch;
// without, one GetRecords is one batch.
func TestBatchWindow(t *testing.T) {
	for _, tt := range []struct {
		window time.Duration
		first  int
	}{{0, 10}, {time.Second, 35}} {
		f := newFake()
		f.perCall = 10
		f.addShard("s", "")
		f.put("s", 70)
		rec := &recorder{}
		r := newTestRunner(t, f, newMem(), rec.handle, testConfig(&poisonLog{}, func(c *Config) {
			c.BatchSize, c.BatchWindow = 35, tt.window
		}))
		mustRun(t, r)
		calls, h := rec.snapshot()
		if len(calls[0]) != tt.first || len(h) != 70 {
			t.Fatalf("window %s: first batch %d records (want %d), handled %d", tt.window, len(calls[0]), tt.first, len(h))
		}
	}
}

// TestProgress: Progress is called at the end with the final stats.
func TestProgress(t *testing.T) {
	f := newFake()
	f.addShard("s", "")
	f.put("s", 3)
	var mu sync.Mutex
	var last Stats
	n := 0
	cfg := testConfig(&poisonLog{}, func(c *Config) {
		c.Progress = func(s Stats) { mu.Lock(); last = s; n++; mu.Unlock() }
	})
	r := newTestRunner(t, f, newMem(), (&recorder{}).handle, cfg)
	mustRun(t, r)
	mu.Lock()
	defer mu.Unlock()
	if n < 1 || last.Records != 3 || last.Batches != 1 || last.LagMillis < 0 || last.ShardsOpen != 1 {
		t.Fatalf("progress called %d times, last %+v", n, last)
	}
}
