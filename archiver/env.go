package archiver

import (
	"errors"
	"strings"
)

// ConfigFromEnv reads the archive's configuration from the variables
// terraform/lambda.tf gives the functions that open the archive (the
// archiver and reconcile): ARCHIVE_BUCKET, ARCHIVE_PREFIX,
// ARCHIVE_BUCKET_OWNER, ARCHIVE_CATALOG and ARCHIVE_NAMESPACE. A missing
// ARCHIVE_CATALOG, or a glue catalog without ARCHIVE_NAMESPACE, is an error
// naming the variable, so that a function fails its init instead of its
// first batch; the rest is Config.Validate's.
//
// The variables are read here, in env.go, so that the terraform tests,
// which compare what each function's package main and the env.go of the
// packages it imports read with what Terraform sets, see them.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Bucket:              getenv("ARCHIVE_BUCKET"),
		Prefix:              getenv("ARCHIVE_PREFIX"),
		ExpectedBucketOwner: getenv("ARCHIVE_BUCKET_OWNER"),
		Catalog:             getenv("ARCHIVE_CATALOG"),
		Namespace:           getenv("ARCHIVE_NAMESPACE"),
	}
	switch {
	case cfg.Catalog == "":
		return cfg, errors.New("ARCHIVE_CATALOG is not set: the Iceberg catalog, \"glue\" in AWS (sqlite:PATH locally)")
	case (cfg.Catalog == "glue" || strings.HasPrefix(cfg.Catalog, "glue:")) && cfg.Namespace == "":
		return cfg, errors.New("ARCHIVE_NAMESPACE is not set: with a glue catalog it names the Glue database holding the archive's tables")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}
