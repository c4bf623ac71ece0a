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

func (g *group) firstSeq() string { return g.first().Seq }

// first is the group's record with the lowest sequence number.
func (g *group) first() *Record {
	first := &g.recs[0]
	for i := range g.recs[1:] {
		if r := &g.recs[i+1]; streamimage.CompareSeq(r.Seq, first.Seq) < 0 {
			first = r
		}
	}
	return first
}

// name is what the group's file is called: its first record (sequence
// number and recordID) and its last sequence number.
func (g *group) name() batchName {
	return newBatchName(g.firstSeq(), g.lastSeq(), recordID(g.first()))
}

// sameStreamRecord reports whether a and b are the same stream record: the
// same sequence number and event, and the same eventID when both have one.
func sameStreamRecord(a, b *Record) bool {
	return streamimage.CompareSeq(a.Seq, b.Seq) == 0 && a.Event.Subject == b.Event.Subject && a.Event.ID == b.Event.ID &&
		(a.StreamEventID == "" || b.StreamEventID == "" || a.StreamEventID == b.StreamEventID)
}

// WriteBatch archives the records of one stream batch. Its records are
// grouped by table and event date; each group becomes one Parquet file,
// named after the group's first record (sequence number and eventID) and
// last sequence number, and each table's files are committed in one Iceberg
// transaction (one snapshot per table and batch). Records must carry their
// stream sequence number (1-40 digits), their stream eventID (see recordID
// for records without one) and a known event type. A call's records must
// come from one shard (one Lambda batch, or several of one shard).
//
// Idempotence (see the package doc for the argument): a group's first
// record is its key. When the table already holds a batch file with the
// same first record and the same last sequence number, the group is
// committed already and is skipped (a redelivery); a batch file with the
// same first record and another last one (an earlier, failed delivery of
// a different size, or half of a bisected batch) is replaced by this one in
// the same commit. Files of another shard never share a first record, even
// when they share sequence numbers. Legacy batch files, named by sequence
// numbers only, are recognised by reading them (commitGroups).
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
		return a.gone(tables[i], err)
	})
	for _, s := range stats {
		st.Records += s.Records
		st.Objects += s.Objects
		st.Bytes += s.Bytes
		st.Skipped += s.Skipped
	}
	return st, err
}

// commitGroups writes and commits one table's groups of a batch. Its
// errors are unclassified: WriteBatch makes a missing bucket or object a
// GoneError (gone).
func (a *Archive) commitGroups(ctx context.Context, table string, groups []*group) (WriteStats, error) {
	var st WriteStats
	if _, err := a.lake.ensureOnce(ctx, table); err != nil {
		return st, err
	}
	keys := make([]string, len(groups))
	names := make([]batchName, len(groups))
	dates := make([]string, 0, len(groups))
	for i, g := range groups {
		names[i] = g.name()
		keys[i] = a.l.batchKey(table, g.date, names[i])
		dates = append(dates, g.date)
	}
	written := make([]*writtenFile, len(groups))
	legacySame := map[string]bool{} // legacy key -> starts with the group's first record (files never change)
	err := a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		files, err := a.lake.dataFiles(ctx, t, dates)
		if err != nil {
			return false, err
		}
		byFirst := map[string][]string{} // first record -> batch files
		legacy := map[string][]string{}  // padded first sequence -> legacy batch files
		for key := range files {
			b, ok := parseBatchKey(key)
			switch {
			case !ok:
			case b.legacy():
				legacy[b.first] = append(legacy[b.first], key)
			default:
				byFirst[b.idempotenceKey()] = append(byFirst[b.idempotenceKey()], key)
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
			old, done, err := a.legacyDeliveries(ctx, legacy[names[i].first], g, names[i], legacySame)
			if err != nil {
				return false, err
			}
			if done {
				st.Skipped += len(g.recs) // committed by a delivery before the keys named their first record
				continue
			}
			todo = append(todo, i)
			replace = append(replace, byFirst[names[i].idempotenceKey()]...)
			replace = append(replace, old...)
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

// legacyDeliveries says what the legacy batch files that share the group's
// first sequence number (keys) are: earlier deliveries of the group, or
// another shard's batches that happen to start at the same number. Their
// names cannot tell, so each is read once (known caches the answer: files
// never change) and is an earlier delivery when it holds the group's first
// record, the same stream record. committed is true when one of them has
// the group's last sequence number too: the group is committed already.
// Otherwise old lists the earlier deliveries, which the group's file
// replaces. Files of other shards are left alone.
func (a *Archive) legacyDeliveries(ctx context.Context, keys []string, g *group, name batchName, known map[string]bool) (old []string, committed bool, err error) {
	first := g.first()
	for _, key := range keys {
		same, ok := known[key]
		if !ok {
			recs, err := a.Read(ctx, key)
			if err != nil {
				return nil, false, err
			}
			for i := range recs {
				if sameStreamRecord(&recs[i], first) {
					same = true
					break
				}
			}
			known[key] = same
		}
		if !same {
			continue
		}
		if b, _ := parseBatchKey(key); b.last == name.last {
			return nil, true, nil
		}
		old = append(old, key)
	}
	return old, false, nil
}
