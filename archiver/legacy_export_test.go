package archiver

import (
	"bytes"
	"context"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"
)

// WriteLegacyBatch commits recs (of one table and day) the way the archiver
// did before batch keys named their first record: one file named
// <first seq>-<last seq>.parquet, added to the table. It returns the key.
// Tests use it to check that files written under the old keys stay
// readable and exactly-once.
func (a *Archive) WriteLegacyBatch(ctx context.Context, recs []Record) (string, error) {
	groups, err := planBatch(recs)
	if err != nil {
		return "", err
	}
	if len(groups) != 1 {
		return "", fmt.Errorf("WriteLegacyBatch: %d groups, want the records of one table and day", len(groups))
	}
	g := groups[0]
	if _, err := a.lake.ensureOnce(ctx, g.table); err != nil {
		return "", err
	}
	key := a.l.legacyBatchKey(g.table, g.date, g.firstSeq(), g.lastSeq())
	var buf bytes.Buffer
	if err := Encode(&buf, g.table, g.recs, a.cfg.encodeOptions()); err != nil {
		return "", err
	}
	if err := a.put(ctx, key, buf.Bytes(), "application/vnd.apache.parquet"); err != nil {
		return "", err
	}
	f, err := newWrittenFile(key, buf.Bytes())
	if err != nil {
		return "", err
	}
	err = a.lake.retry(ctx, func(t *icetable.Table) (bool, error) {
		add, err := dataFiles(a.l, t, []writtenFile{f})
		if err != nil {
			return false, err
		}
		tx := t.NewTransaction()
		if err := tx.AddDataFiles(ctx, add, nil, icetable.WithoutDuplicateCheck()); err != nil {
			return false, err
		}
		_, err = tx.Commit(ctx)
		return false, err
	}, g.table)
	return key, err
}

// LegacyErrorKey is the key a poison record had before error keys named
// its eventID.
func (a *Archive) LegacyErrorKey(date, seq string) string { return a.l.legacyErrorKey(date, seq) }

// legacyBatchKey is the name batch files had before they named their first
// record (<first seq>-<last seq>.parquet): such files stay in the tables,
// and WriteBatch still recognises them (see commitGroups).
func (l layout) legacyBatchKey(table, date, firstSeq, lastSeq string) string {
	return l.batchKey(table, date, newBatchName(firstSeq, lastSeq, ""))
}
