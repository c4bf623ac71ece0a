// Package s3serve holds the server side of the S3 semantics that both of the
// archive's S3 stand-ins, the in-memory fake (archiver/internal/s3mem) and
// the local filesystem warehouse (archiver/s3fs), answer with: conditional
// writes, one-range GETs, listing pages and the errors S3 returns. Both pass
// the conformance suite archiver/internal/s3test, as MinIO does; sharing
// this code keeps them answering alike.
//
// Everything here is pure: no I/O, safe for concurrent use.
package s3serve

import (
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// APIError is an S3 error with its code, e.g. "PreconditionFailed".
func APIError(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }

// NoSuchKey is the error S3 returns for a missing key.
func NoSuchKey() error {
	return &types.NoSuchKey{Message: aws.String("The specified key does not exist.")}
}

// NoSuchBucket is the error S3 returns for a missing bucket.
func NoSuchBucket(name string) error {
	return &types.NoSuchBucket{Message: aws.String("no such bucket: " + name)}
}

// InvalidRange is the error S3 returns for a Range it cannot satisfy.
func InvalidRange() error {
	return APIError("InvalidRange", "The requested range is not satisfiable")
}

// CheckPut decides a PutObject's If-Match and If-None-Match (only "*", as
// S3) against the key's current state: nil when the write may go ahead,
// else the error S3 answers with (412 PreconditionFailed, NoSuchKey for
// If-Match on a missing key, NotImplemented for another If-None-Match).
func CheckPut(in *s3.PutObjectInput, exists bool, etag string) error {
	switch {
	case in.IfNoneMatch != nil && aws.ToString(in.IfNoneMatch) != "*":
		return APIError("NotImplemented", "If-None-Match supports only *")
	case in.IfNoneMatch != nil && exists:
		return APIError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	case in.IfMatch != nil && !exists:
		return NoSuchKey()
	case in.IfMatch != nil && aws.ToString(in.IfMatch) != etag:
		return APIError("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	}
	return nil
}

// ByteRange reads an HTTP Range header of one range, "bytes=a-b", "bytes=a-"
// or "bytes=-n" (the last n bytes), clamped to size as S3 does: the
// inclusive offsets lo and hi, or ok false when S3 would answer InvalidRange.
func ByteRange(h string, size int64) (lo, hi int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	a, b, dash := strings.Cut(spec, "-")
	if !found || !dash || size == 0 {
		return 0, 0, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return 0, 0, false
		}
		return max(0, size-n), size - 1, true
	}
	lo, err := strconv.ParseInt(a, 10, 64)
	if err != nil || lo >= size {
		return 0, 0, false
	}
	hi = size - 1
	if b != "" {
		if hi, err = strconv.ParseInt(b, 10, 64); err != nil || hi < lo {
			return 0, 0, false
		}
		hi = min(hi, size-1)
	}
	return lo, hi, true
}

// ContentRange is the Content-Range header of a ranged GET's answer.
func ContentRange(lo, hi, size int64) string {
	return "bytes " + strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(hi, 10) + "/" + strconv.FormatInt(size, 10)
}

// ListPage answers a ListObjectsV2 request from every key of the bucket
// under the request's Prefix (in any order; keys outside the prefix are
// ignored): keys in byte order after StartAfter or the continuation token,
// grouped by Delimiter into CommonPrefixes, at most MaxKeys (default and
// cap 1000) entries a page. object gives a listed key's entry (its Key is
// set here).
//
// Continuation tokens are "k<key>" (resume after a key) or "p<prefix>"
// (resume after a common prefix, skipping every key under it).
func ListPage(in *s3.ListObjectsV2Input, keys []string, object func(key string) types.Object) *s3.ListObjectsV2Output {
	prefix, delim := aws.ToString(in.Prefix), aws.ToString(in.Delimiter)
	limit := int(aws.ToInt32(in.MaxKeys))
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	after, skip := aws.ToString(in.StartAfter), ""
	if t := aws.ToString(in.ContinuationToken); t != "" {
		after = t[1:]
		if t[0] == 'p' {
			skip = after
		}
	}
	sel := make([]string, 0, len(keys))
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) && k > after && (skip == "" || !strings.HasPrefix(k, skip)) {
			sel = append(sel, k)
		}
	}
	slices.Sort(sel)
	out := &s3.ListObjectsV2Output{Name: in.Bucket, Prefix: in.Prefix, Delimiter: in.Delimiter, IsTruncated: aws.Bool(false)}
	n := 0
	token := ""
	for _, k := range sel {
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				cp := k[:len(prefix)+i+len(delim)]
				if len(out.CommonPrefixes) > 0 && aws.ToString(out.CommonPrefixes[len(out.CommonPrefixes)-1].Prefix) == cp {
					continue
				}
				if n == limit {
					out.IsTruncated = aws.Bool(true)
					break
				}
				out.CommonPrefixes = append(out.CommonPrefixes, types.CommonPrefix{Prefix: aws.String(cp)})
				n++
				token = "p" + cp
				continue
			}
		}
		if n == limit {
			out.IsTruncated = aws.Bool(true)
			break
		}
		o := object(k)
		o.Key = aws.String(k)
		out.Contents = append(out.Contents, o)
		n++
		token = "k" + k
	}
	out.KeyCount = aws.Int32(int32(n))
	if aws.ToBool(out.IsTruncated) {
		out.NextContinuationToken = aws.String(token)
	}
	return out
}
