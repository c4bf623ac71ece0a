package archiver

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/streamfold/streamfold/schema"
)

// EventRef is one archived event as reconcile compares it with the event
// table: its identity, when it was appended, and the hash of its content.
type EventRef struct {
	ID, Subject, Type string
	// Date is the event date (YYYY-MM-DD) of the row's partition.
	Date string
	// RecordedAt is when the event was appended to the event table; zero
	// when the row has none.
	RecordedAt time.Time
	// Hash is schema.ContentHash of the archived event: the value the
	// event table stores in schema.AttrContentHash for the same event.
	// It is empty for a row whose data is not JSON (only rows archived
	// before events were validated can be): no event of the event table
	// has that content.
	Hash string
}

// refCols are the columns EventRefs reads (name -> required): the identity,
// recorded_at, and what schema.ContentHash covers (data, source, subject,
// time, type). The typed columns, spec_version and the stream position are
// never decoded.
var refCols = map[string]bool{
	"event_id": true, "subject": true, "event_type": true, "source": true, "data": true,
	"event_time": true, "event_time_raw": false, "recorded_at": false, "recorded_at_raw": false,
}

// idCols are the columns that say which events a file holds.
var idCols = map[string]bool{"event_id": true, "subject": true}

// prefetchBytes bounds the bytes of the data files a streaming reader
// (EventRefs, Heal) holds at once, fetched ahead or being read; one file
// is always fetched, however large.
const prefetchBytes = 256 << 20

// EventRefs calls fn with every row of the table's current snapshot whose
// event date (the UTC day of event_time, the table's day partition) is one
// of dates (YYYY-MM-DD; no dates, no rows), date by date in ascending
// order, file by file. Like Scan, it plans the files from one snapshot,
// never a listing, so each row is passed once even while batches are
// retried or partitions compacted; a row the table holds twice (an event
// archived twice before compaction removed the copy) is passed twice. Of
// each file it decodes only the columns an EventRef needs (it still GETs
// the whole object: the data column, which the hash covers, is most of
// it), and it holds at most Config.Concurrency files or 256 MiB of them at
// once. It stops at fn's first error and returns it. A table that does not
// exist yet holds no rows.
func (a *Archive) EventRefs(ctx context.Context, table string, dates []string, fn func(EventRef) error) error {
	if len(dates) == 0 {
		return nil
	}
	dates = slices.Compact(slices.Sorted(slices.Values(dates)))
	files, err := a.files(ctx, table, dates)
	if err != nil {
		return a.gone(table, err)
	}
	var keys []string
	for _, d := range dates {
		keys = append(keys, keysOn(files, d)...)
	}
	size := func(key string) int64 { return files[key].FileSizeBytes() }
	err = a.readFiles(ctx, keys, size, func(key string, body []byte) error {
		return readRefs(key, body, fn)
	})
	return a.gone(table, err)
}

// readRefs calls fn with the EventRef of each row of the data file key
// (content body). It returns fn's error as it is.
func readRefs(key string, body []byte, fn func(EventRef) error) error {
	c, err := newColumnReader(bytes.NewReader(body), int64(len(body)), refCols)
	if err != nil {
		return fmt.Errorf("archiver: read %s: %w", key, err)
	}
	defer c.close()
	for {
		row, ok, err := c.next()
		if err != nil {
			return fmt.Errorf("archiver: read %s: %w", key, err)
		}
		if !ok {
			return nil
		}
		ref, err := c.ref(row)
		if err != nil {
			return fmt.Errorf("archiver: read %s: %w", key, err)
		}
		if err := fn(ref); err != nil {
			return err
		}
	}
}

// ref is the EventRef of a row of refCols.
func (c *columnReader) ref(row parquet.Row) (EventRef, error) {
	e := schema.Event{ID: c.str(row, "event_id"), Subject: c.str(row, "subject"), Type: c.str(row, "event_type"), Source: c.str(row, "source")}
	e.Data, _ = c.bytes(row, "data") // aliased: ContentHash does not keep it
	t, err := c.time(row, "event_time", "event_time_raw")
	if err != nil {
		return EventRef{}, err
	}
	if t == nil {
		return EventRef{}, fmt.Errorf("%w: event %s/%s: event_time is null", ErrCorruptObject, e.Subject, e.ID)
	}
	e.Time = *t
	ref := EventRef{ID: e.ID, Subject: e.Subject, Type: e.Type, Date: EventDate(e.Time)}
	ref.Hash, _ = schema.ContentHash(e) // "" when data is not JSON
	recorded, err := c.time(row, "recorded_at", "recorded_at_raw")
	if err != nil {
		return EventRef{}, err
	}
	if recorded != nil {
		ref.RecordedAt = *recorded
	}
	return ref, nil
}

// readIDs returns the (subject, event id) keys (eventKey) of the rows of a
// data file that want holds.
func readIDs(body []byte, want map[string]bool) ([]string, error) {
	c, err := newColumnReader(bytes.NewReader(body), int64(len(body)), idCols)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var out []string
	for {
		row, ok, err := c.next()
		if err != nil || !ok {
			return out, err
		}
		subject, _ := c.bytes(row, "subject")
		id, _ := c.bytes(row, "event_id")
		if k := eventKey(string(subject), string(id)); want[k] {
			out = append(out, k)
		}
	}
}

// eventKey is an event's identity, (subject, id).
func eventKey(subject, id string) string { return subject + "\x00" + id }

// readFiles calls fn with the content of each key, in order, one at a
// time, fetching ahead: at most Config.Concurrency files fetched or being
// fetched and not yet done with, and at most prefetchBytes of them by size
// (one at least). It stops at the first error.
func (a *Archive) readFiles(ctx context.Context, keys []string, size func(string) int64, fn func(key string, body []byte) error) error {
	if len(keys) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		body []byte
		err  error
	}
	results := make([]chan result, len(keys))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	var (
		mu          sync.Mutex
		cond        = sync.NewCond(&mu)
		held        int
		heldBytes   int64
		stop        bool
		wg          sync.WaitGroup
		concurrency = max(1, a.cfg.Concurrency)
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, key := range keys {
			n := size(key)
			mu.Lock()
			for !stop && held > 0 && (held >= concurrency || heldBytes+n > prefetchBytes) {
				cond.Wait()
			}
			if stop {
				mu.Unlock()
				return
			}
			held++
			heldBytes += n
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				obj, err := a.get(ctx, key)
				results[i] <- result{obj.body, err}
			}()
		}
	}()
	defer func() {
		cancel()
		mu.Lock()
		stop = true
		cond.Broadcast()
		mu.Unlock()
		wg.Wait()
	}()
	for i, key := range keys {
		// Every key before i is done with, so key i is fetched or being
		// fetched: the fetcher waits only while it holds others.
		r := <-results[i]
		if r.err != nil {
			return r.err
		}
		err := fn(key, r.body)
		mu.Lock()
		held--
		heldBytes -= size(key)
		cond.Broadcast()
		mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}
