package archiver_test

import (
	"testing"

	"github.com/streamfold/streamfold/archiver/internal/s3test"
)

// TestMinIOConformance checks that the pinned MinIO honours everything the
// archiver relies on, conditional writes (If-Match, If-None-Match) first.
func TestMinIOConformance(t *testing.T) {
	c, bucket := newBucket(t)
	s3test.Run(t, c.S3, bucket, "conformance")
}
