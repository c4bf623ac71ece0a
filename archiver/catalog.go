package archiver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
)

// The archive's tables are Apache Iceberg tables; a catalog holds their
// current metadata pointers. Config.Catalog names it:
//
//	sqlite:PATH          an Iceberg SQL catalog in the SQLite file PATH (local
//	                     stacks and tests; created when missing). Pure Go
//	                     (modernc), left out of builds tagged nosqlcatalog
//	                     (the Lambda functions).
//	glue                 the AWS Glue Data Catalog of the account and region
//	                     of the default AWS configuration; the namespace is
//	                     the Glue database (Athena reads the tables natively).
//	glue:ACCOUNT_ID      the Glue Data Catalog of another account.
//
// Whatever the catalog, table metadata, manifests and data files live in the
// archive's bucket, read and written with the archive's own S3 client.

// ErrBadCatalog: a Config.Catalog this build cannot open.
var ErrBadCatalog = errors.New("archiver: bad catalog")

// catalogOpener opens the catalog of a URI's scheme; rest is what follows
// "scheme:", props the catalog properties (they name the S3 client).
type catalogOpener func(ctx context.Context, rest string, props iceberg.Properties) (catalog.Catalog, error)

var (
	openersMu sync.Mutex
	openers   = map[string]catalogOpener{}
)

func registerCatalog(scheme string, open catalogOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = open
}

// CatalogSchemes lists the catalog kinds this build can open.
func CatalogSchemes() []string {
	openersMu.Lock()
	defer openersMu.Unlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func catalogScheme(uri string) (scheme, rest string) {
	scheme, rest, _ = strings.Cut(uri, ":")
	return scheme, rest
}

func checkCatalogURI(uri string) error {
	if uri == "" {
		return fmt.Errorf("%w: Config.Catalog: is required (sqlite:PATH locally, glue in AWS)", ErrBadCatalog)
	}
	scheme, rest := catalogScheme(uri)
	openersMu.Lock()
	_, ok := openers[scheme]
	openersMu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("%w: %q: this build opens %s catalogs", ErrBadCatalog, uri, strings.Join(CatalogSchemes(), " and "))
	case scheme == "sqlite" && rest == "":
		return fmt.Errorf("%w: %q: sqlite needs a file path, sqlite:PATH", ErrBadCatalog, uri)
	}
	return nil
}

// openCatalog opens uri with the S3 client registered as clientID.
func openCatalog(ctx context.Context, uri, clientID string) (catalog.Catalog, error) {
	if err := checkCatalogURI(uri); err != nil {
		return nil, err
	}
	scheme, rest := catalogScheme(uri)
	openersMu.Lock()
	open := openers[scheme]
	openersMu.Unlock()
	cat, err := open(ctx, rest, iceberg.Properties{s3ClientProp: clientID})
	if err != nil {
		return nil, fmt.Errorf("archiver: open catalog %s: %w", uri, err)
	}
	return cat, nil
}
