package archiver

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// gone classifies an error of work on table: when its cause is a bucket or
// object that does not exist, it returns a *GoneError naming the table and
// what is missing; otherwise err unchanged. table "" is the errors/ prefix.
func (a *Archive) gone(table string, err error) error {
	var g *GoneError
	if err == nil || errors.As(err, &g) {
		return err
	}
	loc, ok := missing(a.cfg.Bucket, err)
	if !ok {
		return err
	}
	name := table
	if table != "" {
		name = strings.Join(a.lake.ident(table), ".")
	}
	return &GoneError{Table: name, Location: loc, Err: err}
}

// missing returns what err says does not exist: the bucket (NoSuchBucket,
// also when an object of it was asked for) or an object (a catalog's
// metadata file, a manifest or a data file read through the Iceberg IO, or
// one of the archive's own reads).
func missing(bucket string, err error) (string, bool) {
	if isNoSuchBucket(err) {
		return "s3://" + bucket, true
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist) {
		return pe.Path, true
	}
	var oe *ObjectError
	if errors.As(err, &oe) && errors.Is(oe.Err, ErrNotFound) {
		return "s3://" + bucket + "/" + oe.Key, true
	}
	return "", false
}

// isNoSuchBucket reports an S3 error saying the bucket does not exist.
func isNoSuchBucket(err error) bool {
	var nsb *types.NoSuchBucket
	if errors.As(err, &nsb) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket"
}
