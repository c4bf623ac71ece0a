package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

const (
	agentMachine = "arn:aws:states:us-west-2:123:stateMachine:my-agent-prod"
	etlMachine   = "arn:aws:states:us-west-2:123:stateMachine:nightly-etl"
)

// countingLister is a fake TagLister. It serves tags per ARN, counts calls
// per ARN, fails with errs[arn] while it is set, and, when gate is set, waits
// for it (or the caller's context) before answering.
type countingLister struct {
	mu    sync.Mutex
	tags  map[string]map[string]string
	errs  map[string]error
	calls map[string]int
	gate  chan struct{}
}

func newCountingLister() *countingLister {
	return &countingLister{
		tags: map[string]map[string]string{
			agentMachine: {"Type": "Agent", "Application": "StepFunctionsAgent"},
			etlMachine:   {"Team": "data"},
		},
		errs:  map[string]error{},
		calls: map[string]int{},
	}
}

func (l *countingLister) ListTagsForResource(ctx context.Context, in *sfn.ListTagsForResourceInput, _ ...func(*sfn.Options)) (*sfn.ListTagsForResourceOutput, error) {
	arn := aws.ToString(in.ResourceArn)
	l.mu.Lock()
	l.calls[arn]++
	gate := l.gate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.errs[arn]; err != nil {
		return nil, err
	}
	out := &sfn.ListTagsForResourceOutput{}
	for k, v := range l.tags[arn] {
		out.Tags = append(out.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	return out, nil
}

func (l *countingLister) count(arn string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[arn]
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestTagCacheHitMissExpiry(t *testing.T) {
	l := newCountingLister()
	clock := &fakeClock{now: time.Date(2025, 9, 29, 12, 0, 0, 0, time.UTC)}
	c := NewTagCache(l, time.Minute, clock.Now)
	steps := []struct {
		name      string
		advance   time.Duration
		arn       string
		wantTags  map[string]string
		wantCalls int // total ListTagsForResource calls for arn after the step
	}{
		{"first lookup misses", 0, agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, 1},
		{"second lookup hits", 0, agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, 1},
		{"another machine misses", 0, etlMachine, map[string]string{"Team": "data"}, 1},
		{"just before the TTL still hits", 59 * time.Second, agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, 1},
		{"at the TTL it expires", time.Second, agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, 2},
		{"the refreshed entry hits", 30 * time.Second, agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent"}, 2},
		{"an untagged machine has empty tags", 0, "arn:aws:states:us-west-2:123:stateMachine:bare", map[string]string{}, 1},
		{"and they are cached too", 0, "arn:aws:states:us-west-2:123:stateMachine:bare", map[string]string{}, 1},
	}
	for _, s := range steps {
		clock.Advance(s.advance)
		tags, err := c.Tags(context.Background(), s.arn)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !reflect.DeepEqual(tags, s.wantTags) {
			t.Errorf("%s: tags = %v, want %v", s.name, tags, s.wantTags)
		}
		if got := l.count(s.arn); got != s.wantCalls {
			t.Errorf("%s: %d calls, want %d", s.name, got, s.wantCalls)
		}
	}
}

func TestTagCacheDefaultTTLIsFiveMinutes(t *testing.T) {
	l := newCountingLister()
	clock := &fakeClock{now: time.Date(2025, 9, 29, 12, 0, 0, 0, time.UTC)}
	c := NewTagCache(l, 0, clock.Now)
	for _, advance := range []time.Duration{0, 5*time.Minute - time.Nanosecond, time.Nanosecond} {
		clock.Advance(advance)
		if _, err := c.Tags(context.Background(), agentMachine); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.count(agentMachine); got != 2 {
		t.Errorf("%d calls, want 2 (miss, hit until 5m, miss at 5m)", got)
	}
}

func TestTagCacheReturnsACopy(t *testing.T) {
	c := NewTagCache(newCountingLister(), time.Minute, nil)
	tags, err := c.Tags(context.Background(), agentMachine)
	if err != nil {
		t.Fatal(err)
	}
	tags["Type"] = "NotAgent"
	again, err := c.Tags(context.Background(), agentMachine)
	if err != nil {
		t.Fatal(err)
	}
	if again["Type"] != "Agent" {
		t.Errorf("cached tags were changed through a returned map: %v", again)
	}
}

func TestTagCacheErrors(t *testing.T) {
	throttled := errors.New("ThrottlingException: Rate exceeded")
	notFound := &types.ResourceNotFound{Message: aws.String("Resource not found")}
	tests := []struct {
		name          string
		err           error
		wantText      string
		wantIs        error
		wantPermanent bool
	}{
		{"transient error", throttled,
			"ingest: list tags of " + agentMachine + ": ThrottlingException: Rate exceeded", throttled, false},
		{"deleted state machine", notFound,
			"ingest: state machine not found: " + agentMachine + ": ResourceNotFound: Resource not found", ErrStateMachineNotFound, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newCountingLister()
			l.errs[agentMachine] = tt.err
			c := NewTagCache(l, time.Minute, nil)
			_, err := c.Tags(context.Background(), agentMachine)
			if errText(err) != tt.wantText {
				t.Errorf("error = %q, want %q", errText(err), tt.wantText)
			}
			if !errors.Is(err, tt.wantIs) || !errors.Is(err, tt.err) {
				t.Errorf("error %v does not wrap %v and %v", err, tt.wantIs, tt.err)
			}
			if got := isPermanent(err); got != tt.wantPermanent {
				t.Errorf("permanent = %v, want %v", got, tt.wantPermanent)
			}
			// Errors are not cached: once the lister recovers, so does the cache.
			l.mu.Lock()
			delete(l.errs, agentMachine)
			l.mu.Unlock()
			if _, err := c.Tags(context.Background(), agentMachine); err != nil {
				t.Fatalf("after recovery: %v", err)
			}
			if got := l.count(agentMachine); got != 2 {
				t.Errorf("%d calls, want 2", got)
			}
		})
	}
}

func TestTagCacheCoalescesConcurrentLookups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newCountingLister()
		l.gate = make(chan struct{})
		c := NewTagCache(l, time.Minute, nil)
		const n = 8
		results := make([]map[string]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = c.Tags(context.Background(), agentMachine) })
		}
		synctest.Wait() // every goroutine is blocked: one in the lister, the others on it
		if got := l.count(agentMachine); got != 1 {
			t.Errorf("%d lister calls while blocked, want 1", got)
		}
		close(l.gate)
		wg.Wait()
		for i := range n {
			if errs[i] != nil || results[i]["Type"] != "Agent" {
				t.Errorf("lookup %d = %v, %v", i, results[i], errs[i])
			}
		}
		if got := l.count(agentMachine); got != 1 {
			t.Errorf("%d lister calls, want 1", got)
		}
	})
}

func TestTagCacheWaiterOutlivesACancelledLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newCountingLister()
		l.gate = make(chan struct{})
		c := NewTagCache(l, time.Minute, nil)
		leaderCtx, cancelLeader := context.WithCancel(context.Background())
		var leaderErr, waiterErr error
		var waiterTags map[string]string
		var wg sync.WaitGroup
		wg.Go(func() { _, leaderErr = c.Tags(leaderCtx, agentMachine) })
		synctest.Wait() // the leader is in the lister
		wg.Go(func() { waiterTags, waiterErr = c.Tags(context.Background(), agentMachine) })
		synctest.Wait() // the waiter waits on the leader
		cancelLeader()
		synctest.Wait() // the waiter has taken the lead and is in the lister
		close(l.gate)
		wg.Wait()
		if !errors.Is(leaderErr, context.Canceled) {
			t.Errorf("leader error = %v, want context.Canceled", leaderErr)
		}
		if waiterErr != nil || waiterTags["Type"] != "Agent" {
			t.Errorf("waiter = %v, %v; want the tags", waiterTags, waiterErr)
		}
		if got := l.count(agentMachine); got != 2 {
			t.Errorf("%d lister calls, want 2", got)
		}
	})
}

func TestTagCacheWaiterHonoursItsOwnContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newCountingLister()
		l.gate = make(chan struct{})
		c := NewTagCache(l, time.Minute, nil)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = c.Tags(context.Background(), agentMachine) })
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Tags(ctx, agentMachine) // time is fake: the timeout fires once all are blocked
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiter error = %v, want context.DeadlineExceeded", err)
		}
		close(l.gate)
		wg.Wait()
	})
}

func TestStaticTags(t *testing.T) {
	s, err := LoadStaticTags(filepath.Join("testdata", "static_tags.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arn  string
		want map[string]string
	}{
		{agentMachine, map[string]string{"Type": "Agent", "Application": "StepFunctionsAgent", "Environment": "prod"}},
		{etlMachine, map[string]string{"Team": "data"}},
		{"arn:aws:states:us-west-2:123:stateMachine:unknown", nil},
	}
	for _, tt := range tests {
		got, err := s.Tags(context.Background(), tt.arn)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tags(%s) = %v, %v; want %v", tt.arn, got, err, tt.want)
		}
	}
	got, _ := s.Tags(context.Background(), agentMachine)
	got["Type"] = "changed"
	if again, _ := s.Tags(context.Background(), agentMachine); again["Type"] != "Agent" {
		t.Error("StaticTags handed out its own map")
	}
}

func TestParseStaticTagsRejects(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		wantErr string
	}{
		{"execution ARN as key", `{"arn:aws:states:us-west-2:123:execution:m:e":{"Type":"Agent"}}`,
			`ingest: static tags: key "arn:aws:states:us-west-2:123:execution:m:e": must be a state machine ARN (arn:...:stateMachine:NAME)`},
		{"bare name as key", `{"my-agent-prod":{}}`,
			`ingest: static tags: key "my-agent-prod": must be a state machine ARN (arn:...:stateMachine:NAME)`},
		{"tag value not a string", `{"arn:aws:states:us-west-2:123:stateMachine:m":{"Type":1}}`,
			"ingest: static tags: json: cannot unmarshal number into Go value of type string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStaticTags([]byte(tt.json))
			if errText(err) != tt.wantErr {
				t.Errorf("error = %q, want %q", errText(err), tt.wantErr)
			}
		})
	}
	if _, err := LoadStaticTags(filepath.Join("testdata", "missing.json")); err == nil {
		t.Error("LoadStaticTags(missing file) succeeded")
	}
}
