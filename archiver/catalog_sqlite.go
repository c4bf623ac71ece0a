//go:build !nosqlcatalog

package archiver

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// sqliteBusyMillis is how long a connection waits for another process's
// write lock on the catalog file before failing.
const sqliteBusyMillis = 30000

func init() {
	registerCatalog("sqlite", func(ctx context.Context, path string, props iceberg.Properties) (catalog.Catalog, error) {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
		// WAL lets readers run beside the one writer; busy_timeout makes
		// concurrent committers (goroutines and processes) wait their turn, and
		// _txlock=immediate takes the write lock when a transaction begins: a
		// read transaction that later writes would fail at once (SQLITE_BUSY)
		// when another writer committed in between.
		dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(" + strconv.Itoa(sqliteBusyMillis) + ")&_pragma=journal_mode(WAL)&_txlock=immediate"
		db, err := sql.Open(sqliteshim.ShimName, dsn)
		if err != nil {
			return nil, err
		}
		cat, err := sqlcat.NewCatalog("streamfold", db, sqlcat.SQLite, props)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &ownedSQLCatalog{Catalog: cat, db: db}, nil
	})
}

// ownedSQLCatalog closes the database handle with the catalog.
type ownedSQLCatalog struct {
	*sqlcat.Catalog
	db *sql.DB
}

func (c *ownedSQLCatalog) Close() error {
	err := c.Catalog.Close()
	if dbErr := c.db.Close(); err == nil {
		err = dbErr
	}
	return err
}
