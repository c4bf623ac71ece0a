package streamrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/smithy-go"

	"github.com/streamfold/streamfold/schema/streamimage"
)

const fakeARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"

// fakeStreams is an in-memory DynamoDB Streams: shards with parents that
// can be closed, trimmed and removed, iterators that can be expired on
// demand or by age, paginated DescribeStream and injectable errors.
type fakeStreams struct {
	mu       sync.Mutex
	shards   []*fakeShard
	iters    map[string]*fakeIter
	nIter    int
	nextSeq  uint64 // the next sequence number; start below a power of ten to vary lengths
	pageSize int    // shards per DescribeStream page
	perCall  int    // most records per GetRecords
	iterTTL  time.Duration
	// errors returned (and consumed) by the next calls
	getRecordsErrs, describeErrs []error

	describeCalls, iteratorCalls, getRecordsCalls int
	iteratorTypes                                 []string
}

type fakeShard struct {
	id, parent string
	recs       []stypes.Record
	closed     bool
	trim       int // index of the first record still in the stream
	removed    bool
}

type fakeIter struct {
	shard   *fakeShard
	pos     int
	issued  time.Time
	expired bool
}

func newFake() *fakeStreams {
	return &fakeStreams{iters: map[string]*fakeIter{}, nextSeq: 95, pageSize: 100, perCall: 1000}
}

func (f *fakeStreams) addShard(id, parent string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shards = append(f.shards, &fakeShard{id: id, parent: parent})
}

func (f *fakeStreams) shard(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	return nil
}

// put appends n records to a shard and returns their sequence numbers.
// Record i of shard S has the key id "S/i".
func (f *fakeStreams) put(id string, n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(id)
	var seqs []string
	for range n {
		seq := strconv.FormatUint(f.nextSeq, 10)
		f.nextSeq++
		key := fmt.Sprintf("%s/%d", id, len(s.recs))
		s.recs = append(s.recs, stypes.Record{
			EventID:      aws.String("ev-" + seq),
			EventName:    stypes.OperationTypeInsert,
			EventVersion: aws.String("1.1"),
			EventSource:  aws.String("aws:dynamodb"),
			Dynamodb: &stypes.StreamRecord{
				SequenceNumber:              aws.String(seq),
				ApproximateCreationDateTime: aws.Time(time.Now().Truncate(time.Second)),
				Keys: map[string]stypes.AttributeValue{
					"subject": &stypes.AttributeValueMemberS{Value: "s"},
					"id":      &stypes.AttributeValueMemberS{Value: key},
				},
				NewImage: map[string]stypes.AttributeValue{
					"subject": &stypes.AttributeValueMemberS{Value: "s"},
					"id":      &stypes.AttributeValueMemberS{Value: key},
				},
				SizeBytes:      aws.Int64(42),
				StreamViewType: stypes.StreamViewTypeNewImage,
			},
		})
		seqs = append(seqs, seq)
	}
	return seqs
}

func (f *fakeStreams) closeShard(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shard(id).closed = true
}

// trimTo drops the first n records of a shard from the stream.
func (f *fakeStreams) trimTo(id string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shard(id).trim = n
}

// expireIterators makes every iterator issued so far expire.
func (f *fakeStreams) expireIterators() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.iters {
		it.expired = true
	}
}

func apiErr(code string) error {
	return &smithy.GenericAPIError{Code: code, Message: code}
}

// begin starts a call: it fails with ctx's error, or else locks f, counts
// the call in calls and fails with the first error left in errs, unlocking
// f again. On success the caller holds the lock and unlocks it.
func (f *fakeStreams) begin(ctx context.Context, calls *int, errs *[]error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	*calls++
	if len(*errs) > 0 {
		err := (*errs)[0]
		*errs = (*errs)[1:]
		f.mu.Unlock()
		return err
	}
	return nil
}

func (f *fakeStreams) DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	if err := f.begin(ctx, &f.describeCalls, &f.describeErrs); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if aws.ToString(in.StreamArn) != fakeARN {
		return nil, &stypes.ResourceNotFoundException{Message: aws.String("no such stream")}
	}
	limit := f.pageSize
	if in.Limit != nil && int(*in.Limit) < limit {
		limit = int(*in.Limit)
	}
	var visible []*fakeShard
	for _, s := range f.shards {
		if !s.removed {
			visible = append(visible, s)
		}
	}
	start := 0
	if x := aws.ToString(in.ExclusiveStartShardId); x != "" {
		start = slices.IndexFunc(visible, func(s *fakeShard) bool { return s.id == x }) + 1
	}
	end := min(start+limit, len(visible))
	desc := &stypes.StreamDescription{StreamArn: in.StreamArn, StreamStatus: stypes.StreamStatusEnabled}
	for _, s := range visible[start:end] {
		sh := stypes.Shard{ShardId: aws.String(s.id), SequenceNumberRange: &stypes.SequenceNumberRange{}}
		if s.parent != "" {
			sh.ParentShardId = aws.String(s.parent)
		}
		if len(s.recs) > 0 {
			sh.SequenceNumberRange.StartingSequenceNumber = s.recs[0].Dynamodb.SequenceNumber
			if s.closed {
				sh.SequenceNumberRange.EndingSequenceNumber = s.recs[len(s.recs)-1].Dynamodb.SequenceNumber
			}
		}
		desc.Shards = append(desc.Shards, sh)
	}
	if end < len(visible) {
		desc.LastEvaluatedShardId = aws.String(visible[end-1].id)
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: desc}, nil
}

func (f *fakeStreams) newIter(s *fakeShard, pos int) *string {
	f.nIter++
	tok := fmt.Sprintf("it-%d", f.nIter)
	f.iters[tok] = &fakeIter{shard: s, pos: pos, issued: time.Now()}
	return aws.String(tok)
}

func (f *fakeStreams) GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.iteratorCalls++
	f.iteratorTypes = append(f.iteratorTypes, string(in.ShardIteratorType))
	s := f.shard(aws.ToString(in.ShardId))
	if s == nil || s.removed {
		return nil, &stypes.ResourceNotFoundException{Message: aws.String("no such shard")}
	}
	pos := 0
	switch in.ShardIteratorType {
	case stypes.ShardIteratorTypeTrimHorizon:
		pos = s.trim
	case stypes.ShardIteratorTypeLatest:
		pos = len(s.recs)
	case stypes.ShardIteratorTypeAtSequenceNumber, stypes.ShardIteratorTypeAfterSequenceNumber:
		want := aws.ToString(in.SequenceNumber)
		i := slices.IndexFunc(s.recs, func(r stypes.Record) bool { return streamimage.CompareSeq(*r.Dynamodb.SequenceNumber, want) == 0 })
		if i < 0 {
			return nil, apiErr("ValidationException")
		}
		pos = i
		if in.ShardIteratorType == stypes.ShardIteratorTypeAfterSequenceNumber {
			pos = i + 1
		}
		if pos < s.trim {
			return nil, &stypes.TrimmedDataAccessException{Message: aws.String("trimmed")}
		}
	default:
		return nil, apiErr("ValidationException")
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: f.newIter(s, pos)}, nil
}

func (f *fakeStreams) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if err := f.begin(ctx, &f.getRecordsCalls, &f.getRecordsErrs); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	it := f.iters[aws.ToString(in.ShardIterator)]
	switch {
	case it == nil:
		return nil, apiErr("ValidationException")
	case it.expired || (f.iterTTL > 0 && time.Since(it.issued) > f.iterTTL):
		return nil, &stypes.ExpiredIteratorException{Message: aws.String("expired")}
	case it.shard.removed:
		return nil, &stypes.ResourceNotFoundException{Message: aws.String("no such shard")}
	case it.pos < it.shard.trim:
		return nil, &stypes.TrimmedDataAccessException{Message: aws.String("trimmed")}
	}
	limit := f.perCall
	if in.Limit != nil && int(*in.Limit) < limit {
		limit = int(*in.Limit)
	}
	end := min(it.pos+limit, len(it.shard.recs))
	out := &dynamodbstreams.GetRecordsOutput{Records: slices.Clone(it.shard.recs[it.pos:end])}
	if !(it.shard.closed && end == len(it.shard.recs)) {
		out.NextShardIterator = f.newIter(it.shard, end)
	}
	return out, nil
}

// memCheckpoints is an in-memory CheckpointStore.
type memCheckpoints struct {
	mu    sync.Mutex
	cps   map[string]map[string]Checkpoint
	saves int
	fail  error // returned by every Save when set
}

func newMem() *memCheckpoints { return &memCheckpoints{cps: map[string]map[string]Checkpoint{}} }

func (m *memCheckpoints) Load(ctx context.Context, consumer string) (map[string]Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]Checkpoint{}
	for k, v := range m.cps[consumer] {
		out[k] = v
	}
	return out, nil
}

func (m *memCheckpoints) Save(ctx context.Context, consumer string, cp Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.cps[consumer] == nil {
		m.cps[consumer] = map[string]Checkpoint{}
	}
	m.cps[consumer][cp.ShardID] = cp
	m.saves++
	return nil
}

func (m *memCheckpoints) get(consumer, shard string) Checkpoint {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cps[consumer][shard]
}

var errBoom = errors.New("boom")
