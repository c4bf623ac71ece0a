package archiver

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// Table returns the current metadata of one archive table as the catalog
// holds it (creating or evolving the table first, as a write would). Its IO
// reads through the archive's own S3 client, so Iceberg scan planning
// (t.Scan(...).PlanFiles), reading (ToArrowRecords), snapshots and the
// metadata files all work on it. It is for readers and checks: change the
// tables only through WriteBatch, Compact and Maintain.
func (a *Archive) Table(ctx context.Context, name string) (*table.Table, error) {
	if _, ok := tableByName[name]; !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, name)
	}
	return a.lake.load(ctx, name)
}
