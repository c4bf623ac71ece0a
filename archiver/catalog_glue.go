package archiver

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/glue"
	"github.com/aws/aws-sdk-go-v2/config"
)

func init() {
	registerCatalog("glue", func(ctx context.Context, account string, props iceberg.Properties) (catalog.Catalog, error) {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, err
		}
		p := glue.AwsProperties(props)
		if account != "" {
			p[glue.CatalogIdKey] = account
		}
		return glue.NewCatalog(glue.WithAwsConfig(cfg), glue.WithAwsProperties(p))
	})
}
