package archiver

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/streamfold/streamfold/schema/streamimage"
)

// WriteStats says what WriteBatch wrote.
type WriteStats struct {
	Records int   // records of the batch now in the archive (Skipped included)
	Objects int   // data files this call committed (one per table and event date)
	Bytes   int64 // bytes of those files
	Skipped int   // records of groups an earlier delivery committed already
}

// group is the records of one batch that go to one partition.
type group struct {
	table, date string
	recs        []Record
}

// planBatch groups records by (table, event date); commitGroups names each
// group's file after its first and last sequence numbers. Groups come out
// sorted by table and date.
func planBatch(recs []Record) ([]*group, error) {
	byKey := map[string]*group{}
	var groups []*group
	for i := range recs {
		r := &recs[i]
		if err := checkSeq(r.Seq); err != nil {
			return nil, fmt.Errorf("archiver: event %s/%s: %w", r.Event.Subject, r.Event.ID, err)
		}
		table, ok := TableFor(r.Event.Type)
		if !ok {
			return nil, fmt.Errorf("%w: event %s/%s: type %q has no table", ErrUnknownTable, r.Event.Subject, r.Event.ID, r.Event.Type)
		}
		if err := checkTime("time", r.Event.Time); err != nil {
			return nil, fmt.Errorf("archiver: event %s/%s: %w", r.Event.Subject, r.Event.ID, err)
		}
		date := EventDate(r.Event.Time)
		k := table + "/" + date
		g := byKey[k]
		if g == nil {
			g = &group{table: table, date: date}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.recs = append(g.recs, *r)
	}
	slices.SortFunc(groups, func(a, b *group) int {
		return strings.Compare(a.table+"/"+a.date, b.table+"/"+b.date)
	})
	return groups, nil
}

func (g *group) lastSeq() string {
	last := g.recs[0].Seq
	for _, r := range g.recs[1:] {
		if streamimage.CompareSeq(r.Seq, last) > 0 {
			last = r.Seq
		}
	}
	return last
}

func (g *group) firstSeq() string {
	first := g.recs[0].Seq
	for _, r := range g.recs[1:] {
		if streamimage.CompareSeq(r.Seq, first) < 0 {
			first = r.Seq
		}
	}
	return first
}

// WriteBatch archives the records of one stream batch. Its records are
// grouped by table and event date; each group becomes one Parquet file,
// named after the group's first and last stream sequence numbers, and each
// table's files are committed in one Iceberg transaction (one snapshot per
// table and batch). Records must carry their stream sequence number (1-40
// digits) and a known event type.
//
// Idempotence (see the package doc for the argument): a group's first
// sequence number is its key. When the table already holds a batch file
// with the same key and the same last record, the group is committed
// already and is skipped (a redelivery); a batch file with the same key
// and other content (an earlier, failed delivery of a different size) is
// replaced by this one in the same commit.
//
// An error means some tables may be committed and others not; retrying the
// same batch (or one starting at the same record) is the remedy, and
// leaves each record archived once.
func (a *Archive) WriteBatch(ctx context.Context, recs []Record) (WriteStats, error) {
	var st WriteStats
	groups, err := planBatch(recs)
	if err != nil || len(groups) == 0 {
		return st, err
	}
	byTable := map[string][]*group{}
	var tables []string
	for _, g := range groups {
		if byTable[g.table] == nil {
			tables = append(tables, g.table)
		}
		byTable[g.table] = append(byTable[g.table], g)
	}
	stats := make([]WriteStats, len(tables))
	err = forEach(ctx, len(tables), a.cfg.Concurrency, func(ctx context.Context, i int) error {
		var err error
		stats[i], err = a.commitGroups(ctx, tables[i], byTable[tables[i]])
		return err
	})
	for _, s := range stats {
		st.Records += s.Records
		st.Objects += s.Objects
		st.Bytes += s.Bytes
		st.Skipped += s.Skipped
	}
	return st, err
}

// commitGroups writes and commits one table's groups of a batch.
func (a *Archive) commitGroups(ctx context.Context, table string, groups []*group) (WriteStats, error) {
	var st WriteStats
	if _, err := a.lake.ensureOnce(ctx, table); err != nil {
		return st, err
	}
	keys := make([]string, len(groups))
	dates := make([]string, 0, len(groups))
	for i, g := range groups {
		keys[i] = a.l.batchKey(table, g.date, g.firstSeq(), g.lastSeq())
		dates = append(dates, g.date)
	}
	written := make([]*writtenFile, len(groups))
	err := a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		files, err := a.lake.dataFiles(ctx, t, dates)
		if err != nil {
			return false, err
		}
		byFirst := map[string][]string{}
		for key := range files {
			if first, ok := batchFirstSeq(key); ok {
				byFirst[first] = append(byFirst[first], key)
			}
		}
		var todo []int
		var replace []string
		st = WriteStats{}
		for i, g := range groups {
			st.Records += len(g.recs)
			if _, ok := files[keys[i]]; ok {
				st.Skipped += len(g.recs) // committed by an earlier delivery
				continue
			}
			todo = append(todo, i)
			replace = append(replace, byFirst[streamimage.PadSeq(g.firstSeq())]...)
		}
		if len(todo) == 0 {
			return true, nil
		}
		err = forEach(ctx, len(todo), a.cfg.Concurrency, func(ctx context.Context, j int) error {
			i := todo[j]
			if written[i] != nil {
				return nil
			}
			var buf bytes.Buffer
			if err := Encode(&buf, table, groups[i].recs, a.cfg.encodeOptions()); err != nil {
				return err
			}
			f, err := newWrittenFile(keys[i], buf.Bytes())
			if err != nil {
				return err
			}
			if err := a.put(ctx, keys[i], buf.Bytes(), "application/vnd.apache.parquet"); err != nil {
				return err
			}
			written[i] = &f
			return nil
		})
		if err != nil {
			return false, err
		}
		adding := make([]writtenFile, len(todo))
		for j, i := range todo {
			adding[j] = *written[i]
			st.Objects++
			st.Bytes += written[i].size
		}
		add, err := dataFiles(a.l, t, adding)
		if err != nil {
			return false, err
		}
		del := make([]iceberg.DataFile, len(replace))
		for j, k := range replace {
			del[j] = files[k]
		}
		props := iceberg.Properties{"streamfold.operation": "batch", "streamfold.records": strconv.Itoa(st.Records - st.Skipped)}
		tx := t.NewTransaction()
		if len(del) == 0 {
			// The duplicate check scans every manifest; ours above read
			// only these dates' partitions.
			err = tx.AddDataFiles(ctx, add, props, icetable.WithoutDuplicateCheck())
		} else {
			props["streamfold.replaced"] = strconv.Itoa(len(del))
			err = tx.ReplaceDataFilesWithDataFiles(ctx, del, add, props)
		}
		if err == nil {
			_, err = tx.Commit(ctx)
		}
		return false, err
	}, table)
	if err != nil {
		return WriteStats{}, err
	}
	return st, nil
}
