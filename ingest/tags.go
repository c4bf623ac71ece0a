package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/streamfold/streamfold/schema"
)

// DefaultTagTTL is how long a TagCache keeps a state machine's tags by default.
const DefaultTagTTL = 5 * time.Minute

// ErrStateMachineNotFound is returned, wrapped with the ARN, when the state
// machine no longer exists. The error is permanent (it has Permanent() true):
// redelivering the event cannot bring the tags back.
var ErrStateMachineNotFound = errors.New("ingest: state machine not found")

// TagSource gives a state machine's tags. A state machine without tags has a
// nil or empty map and no error.
type TagSource interface {
	Tags(ctx context.Context, stateMachineArn string) (map[string]string, error)
}

// TagLister is the one method of the SFN client the adapter uses;
// *sfn.Client satisfies it.
type TagLister interface {
	ListTagsForResource(ctx context.Context, in *sfn.ListTagsForResourceInput, optFns ...func(*sfn.Options)) (*sfn.ListTagsForResourceOutput, error)
}

// TagCache is a TagSource that lists tags through a TagLister and keeps them
// for a TTL. Errors are not cached. Concurrent lookups of one ARN share a
// single ListTagsForResource call. It is safe for concurrent use.
type TagCache struct {
	lister TagLister
	ttl    time.Duration
	now    func() time.Time

	mu       sync.Mutex
	entries  map[string]tagEntry
	inflight map[string]*tagCall
}

type tagEntry struct {
	tags    map[string]string
	expires time.Time
}

type tagCall struct {
	done chan struct{}
	tags map[string]string
	err  error
}

// pruneThreshold is the entry count above which a store sweeps expired entries.
const pruneThreshold = 1024

// NewTagCache returns a cache over l. A ttl <= 0 means DefaultTagTTL; a nil
// now means time.Now.
func NewTagCache(l TagLister, ttl time.Duration, now func() time.Time) *TagCache {
	if ttl <= 0 {
		ttl = DefaultTagTTL
	}
	if now == nil {
		now = time.Now
	}
	return &TagCache{
		lister:   l,
		ttl:      ttl,
		now:      now,
		entries:  make(map[string]tagEntry),
		inflight: make(map[string]*tagCall),
	}
}

// Tags returns the state machine's tags, from the cache when they are fresh.
// The returned map is the caller's to keep.
func (c *TagCache) Tags(ctx context.Context, stateMachineArn string) (map[string]string, error) {
	for {
		c.mu.Lock()
		if e, ok := c.entries[stateMachineArn]; ok && c.now().Before(e.expires) {
			c.mu.Unlock()
			return maps.Clone(e.tags), nil
		}
		if call, ok := c.inflight[stateMachineArn]; ok {
			c.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			// The leader's context may have ended while ours has not:
			// then look again (and lead) rather than fail.
			if call.err != nil && isContextErr(call.err) && ctx.Err() == nil {
				continue
			}
			return maps.Clone(call.tags), call.err
		}
		call := &tagCall{done: make(chan struct{})}
		c.inflight[stateMachineArn] = call
		c.mu.Unlock()

		call.tags, call.err = c.list(ctx, stateMachineArn)

		c.mu.Lock()
		delete(c.inflight, stateMachineArn)
		if call.err == nil {
			c.store(stateMachineArn, call.tags)
		}
		c.mu.Unlock()
		close(call.done)
		return maps.Clone(call.tags), call.err
	}
}

// store caches tags; c.mu is held.
func (c *TagCache) store(arn string, tags map[string]string) {
	now := c.now()
	if len(c.entries) >= pruneThreshold {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
	}
	c.entries[arn] = tagEntry{tags: tags, expires: now.Add(c.ttl)}
}

func (c *TagCache) list(ctx context.Context, arn string) (map[string]string, error) {
	out, err := c.lister.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
	if err != nil {
		var nf *types.ResourceNotFound
		if errors.As(err, &nf) {
			return nil, &permanentError{err: fmt.Errorf("%w: %s: %w", ErrStateMachineNotFound, arn, err)}
		}
		return nil, fmt.Errorf("ingest: list tags of %s: %w", arn, err)
	}
	tags := make(map[string]string, len(out.Tags))
	for _, t := range out.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags, nil
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// permanentError marks an error that retrying will not fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string   { return e.err.Error() }
func (e *permanentError) Unwrap() error   { return e.err }
func (e *permanentError) Permanent() bool { return true }

// StaticTags is a TagSource from a fixed map of state machine ARN to tags, for
// local runs and tests. Its JSON form is
// {"<stateMachineArn>": {"Type": "Agent", "Application": "StepFunctionsAgent"}}.
// A state machine that is not in the map has no tags.
type StaticTags map[string]map[string]string

// Tags returns a copy of the state machine's tags.
func (s StaticTags) Tags(_ context.Context, stateMachineArn string) (map[string]string, error) {
	return maps.Clone(s[stateMachineArn]), nil
}

// LoadStaticTags reads StaticTags from a JSON file. Every key must be a state
// machine ARN.
func LoadStaticTags(path string) (StaticTags, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: static tags: %w", err)
	}
	return ParseStaticTags(b)
}

// ParseStaticTags decodes StaticTags from JSON. Every key must be a state
// machine ARN.
func ParseStaticTags(b []byte) (StaticTags, error) {
	var s StaticTags
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("ingest: static tags: %w", err)
	}
	arns := make([]string, 0, len(s))
	for arn := range s {
		arns = append(arns, arn)
	}
	sort.Strings(arns)
	for _, arn := range arns {
		if !schema.IsStateMachineARN(arn) {
			return nil, fmt.Errorf("ingest: static tags: key %q: must be a state machine ARN (arn:...:stateMachine:NAME)", arn)
		}
	}
	return s, nil
}
