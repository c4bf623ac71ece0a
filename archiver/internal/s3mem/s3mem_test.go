package s3mem_test

import (
	"testing"

	"github.com/streamfold/streamfold/archiver/internal/s3mem"
	"github.com/streamfold/streamfold/archiver/internal/s3test"
)

func TestConformance(t *testing.T) {
	s3test.Run(t, s3mem.New("b"), "b", "conformance")
}
