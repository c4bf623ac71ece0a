//go:build !nosqlcatalog

package archiver

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
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
		return &ownedSQLCatalog{Catalog: cat, db: db, name: "streamfold", props: props}, nil
	})
}

// ownedSQLCatalog closes the database handle with the catalog, and
// registers existing tables (RegisterTable), which iceberg-go's SQL catalog
// lacks.
type ownedSQLCatalog struct {
	*sqlcat.Catalog
	db    *sql.DB
	name  string // the catalog_name of its rows
	props iceberg.Properties
}

// RegisterTable adds a table whose metadata file exists (the Iceberg SQL
// catalog's row: namespace, name, metadata location), as the Glue and REST
// catalogs' RegisterTable do. The namespace must exist; a table of that
// name is catalog.ErrTableAlreadyExists.
func (c *ownedSQLCatalog) RegisterTable(ctx context.Context, ident table.Identifier, metadataLoc string) (*table.Table, error) {
	if err := catalog.ValidateTableIdentifier(ident); err != nil {
		return nil, err
	}
	ns := catalog.NamespaceFromIdent(ident)
	exists, err := c.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchNamespace, strings.Join(ns, "."))
	}
	// Read it first: a location that holds no table metadata is refused
	// before the catalog names it.
	if _, err := table.NewFromLocation(ctx, ident, metadataLoc, icebergio.LoadFSFunc(c.props, metadataLoc), c); err != nil {
		return nil, fmt.Errorf("read table metadata %s: %w", metadataLoc, err)
	}
	_, err = c.db.ExecContext(ctx,
		`INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, ?)`,
		c.name, strings.Join(ns, "."), catalog.TableNameFromIdent(ident), metadataLoc, sqlcat.TableType)
	if err != nil {
		if ok, _ := c.CheckTableExists(ctx, ident); ok {
			return nil, fmt.Errorf("%w: %s", catalog.ErrTableAlreadyExists, strings.Join(ident, "."))
		}
		return nil, fmt.Errorf("register table %s: %w", strings.Join(ident, "."), err)
	}
	return c.LoadTable(ctx, ident)
}

func (c *ownedSQLCatalog) Close() error {
	err := c.Catalog.Close()
	if dbErr := c.db.Close(); err == nil {
		err = dbErr
	}
	return err
}
