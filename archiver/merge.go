package archiver

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
)

// merged is what mergeGroups wrote.
type merged struct {
	files      []writtenFile // the outputs with rows, in order
	rows, dups int
	bytes      int64
}

// keys returns the keys of the outputs written, in order.
func (m merged) keys() []string {
	out := make([]string, len(m.files))
	for i, f := range m.files {
		out[i] = f.key
	}
	return out
}

// mergeGroups merges each group of input files into its output (mergeInto),
// sharing seen across the groups so that each (subject, event id) is
// written once in all of them. Outputs that would be empty are not written.
func (a *Archive) mergeGroups(ctx context.Context, table string, groups [][]string, outputs []string, seen map[string]bool) (merged, error) {
	var m merged
	for n, g := range groups {
		rows, dups, out, err := a.mergeInto(ctx, table, g, outputs[n], seen)
		if err != nil {
			return m, err
		}
		m.rows += rows
		m.dups += dups
		if rows > 0 {
			m.bytes += out.size
			m.files = append(m.files, out)
		}
	}
	return m, nil
}

// mergeInto merges the records of the input objects into one output object
// in (event time, sequence) order, dropping any (subject, event id) in seen
// and adding the others to it. It returns the rows written, the duplicates
// dropped and the output file; with no rows it writes nothing.
func (a *Archive) mergeInto(ctx context.Context, table string, inputs []string, out string, seen map[string]bool) (rows, dups int, _ writtenFile, err error) {
	bodies := make([][]byte, len(inputs))
	err = forEach(ctx, len(inputs), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		obj, err := a.get(ctx, inputs[i])
		bodies[i] = obj.body
		return err
	})
	if err != nil {
		return 0, 0, writtenFile{}, err
	}
	h := &mergeHeap{}
	for i, b := range bodies {
		d, err := newDecoder(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return 0, 0, writtenFile{}, fmt.Errorf("archiver: compact %s: %w", inputs[i], err)
		}
		defer d.close()
		if err := h.pushNext(d); err != nil {
			return 0, 0, writtenFile{}, fmt.Errorf("archiver: compact %s: %w", inputs[i], err)
		}
	}
	var buf bytes.Buffer
	opts := a.cfg.encodeOptions()
	opts.Compression = a.cfg.CompactCompression
	enc, err := newEncoder(&buf, table, opts, maxPageBytes) // outputs are large: the largest pages
	if err != nil {
		return 0, 0, writtenFile{}, err
	}
	for h.Len() > 0 {
		it := heap.Pop(h).(mergeItem)
		id := it.rec.Event.Subject + "\x00" + it.rec.Event.ID
		if seen[id] {
			dups++
		} else {
			seen[id] = true
			if err := enc.write(&it.rec); err != nil {
				return 0, 0, writtenFile{}, err
			}
			rows++
		}
		if err := h.pushNext(it.d); err != nil {
			return 0, 0, writtenFile{}, err
		}
	}
	if err := enc.close(); err != nil {
		return 0, 0, writtenFile{}, err
	}
	if rows == 0 {
		return 0, dups, writtenFile{}, nil
	}
	f, err := newWrittenFile(out, buf.Bytes())
	if err != nil {
		return 0, 0, writtenFile{}, err
	}
	if err := a.put(ctx, out, buf.Bytes(), "application/vnd.apache.parquet"); err != nil {
		return 0, 0, writtenFile{}, err
	}
	return rows, dups, f, nil
}

type mergeItem struct {
	rec Record
	d   *decoder
}

// mergeHeap yields the smallest head record of several sorted decoders.
type mergeHeap []mergeItem

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return compareRecords(&h[i].rec, &h[j].rec) < 0 }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// pushNext pushes d's next record, if any.
func (h *mergeHeap) pushNext(d *decoder) error {
	rec, ok, err := d.next()
	if err != nil || !ok {
		return err
	}
	heap.Push(h, mergeItem{rec: rec, d: d})
	return nil
}
