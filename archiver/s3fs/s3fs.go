// Package s3fs is S3 on the local filesystem: the subset of the S3 API the
// archiver uses (archiver.S3API: PutObject with If-Match and If-None-Match: *,
// GetObject with a one-range Range header, DeleteObject, ListObjectsV2 with
// prefix, delimiter and pagination), storing each bucket as a directory under
// a root and each object as a file at its key. With the archiver's SQLite
// catalog it makes a local Iceberg warehouse that needs no server:
// `streamfold dev up --archive fs` and `make demo` use it instead of MinIO.
//
// It answers like S3 does, with the same code as the in-memory fake
// (archiver/internal/s3serve), and passes the same conformance suite
// (archiver/internal/s3test) as that fake and MinIO:
//
//   - writes are atomic: the body goes to a temporary file under ROOT/.tmp
//     (outside every bucket, so no listing shows it), then is renamed onto
//     the key; a reader sees the old object or the new one, never a part;
//   - conditional writes, renames and deletes hold an exclusive lock
//     (ROOT/.lock, flock), so that concurrent read-modify-writes lose no
//     update, across processes too;
//   - ETags are the quoted MD5 of the content (computed on GetObject and
//     PutObject; listings carry none), LastModified is the file's
//     modification time in whole seconds;
//   - listings are in byte order of the keys.
//
// A key maps to a path, so keys that a filesystem cannot hold side by side
// are refused with InvalidArgument: an empty segment ("a//b", a leading or
// trailing "/"), "." or "..", or a key that is both an object and the prefix
// of another ("a" and "a/b"). The archive's keys are never such.
//
// Buckets are made with CreateBucket; an operation on a missing one is
// NoSuchBucket. It is safe for concurrent use.
package s3fs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver/internal/s3serve"
)

// ErrInvalidRoot is returned by New for an empty root.
var ErrInvalidRoot = errors.New("s3fs: root must not be empty")

// tmpDir and lockFile live in the root, beside the bucket directories; a
// bucket cannot be named so (bucket names do not start with ".").
const (
	tmpDir   = ".tmp"
	lockFile = ".lock"
)

// S3 is a filesystem S3 rooted at one directory. Call New.
type S3 struct {
	root string
	mu   sync.Mutex // in-process half of the lock; flock on ROOT/.lock is the other
}

// New returns the store rooted at root, creating the directory if needed.
func New(root string) (*S3, error) {
	if root == "" {
		return nil, ErrInvalidRoot
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("s3fs: root %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, tmpDir), 0o755); err != nil {
		return nil, fmt.Errorf("s3fs: %w", err)
	}
	return &S3{root: abs}, nil
}

// Root is the directory the buckets are in.
func (s *S3) Root() string { return s.root }

// CreateBucket makes bucket's directory; an existing bucket is not an error.
func (s *S3) CreateBucket(bucket string) error {
	if !validBucket(bucket) {
		return s3serve.APIError("InvalidBucketName", fmt.Sprintf("invalid bucket name %q", bucket))
	}
	if err := os.MkdirAll(filepath.Join(s.root, bucket), 0o755); err != nil {
		return fmt.Errorf("s3fs: create bucket %s: %w", bucket, err)
	}
	return nil
}

func validBucket(b string) bool {
	return b != "" && !strings.HasPrefix(b, ".") && !strings.ContainsAny(b, `/\`)
}

// bucketDir returns the bucket's directory, or NoSuchBucket.
func (s *S3) bucketDir(name *string) (string, error) {
	b := aws.ToString(name)
	if !validBucket(b) {
		return "", s3serve.NoSuchBucket(b)
	}
	dir := filepath.Join(s.root, b)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", s3serve.NoSuchBucket(b)
	}
	return dir, nil
}

// path returns the file of key in bucket, or InvalidArgument for a key the
// filesystem cannot hold.
func (s *S3) path(bucket, key *string) (string, error) {
	dir, err := s.bucketDir(bucket)
	if err != nil {
		return "", err
	}
	k := aws.ToString(key)
	for _, seg := range strings.Split(k, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, '\\') {
			return "", s3serve.APIError("InvalidArgument", fmt.Sprintf("s3fs: key %q cannot be a file path", k))
		}
	}
	return filepath.Join(dir, filepath.FromSlash(k)), nil
}

// lock takes the store's exclusive lock, in this process and across
// processes sharing the root; the returned function releases it.
func (s *S3) lock() (func(), error) {
	s.mu.Lock()
	f, err := os.OpenFile(filepath.Join(s.root, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("s3fs: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		s.mu.Unlock()
		return nil, fmt.Errorf("s3fs: lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		s.mu.Unlock()
	}, nil
}

// fileETag is the quoted MD5 of a file's content; missing reports that
// there is no object at path (no file, or a directory).
func fileETag(path string) (etag string, missing bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", isMissing(err), err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return "", true, err
	}
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, err
	}
	return quote(h.Sum(nil)), false, nil
}

func quote(sum []byte) string { return `"` + hex.EncodeToString(sum) + `"` }

// isMissing reports an error that means "no such file": not there, or a
// path through a file.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// PutObject stores an object atomically, honouring IfMatch and IfNoneMatch ("*" only).
func (s *S3) PutObject(ctx context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(in.Bucket, in.Key)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Join(s.root, tmpDir), "put-*")
	if err != nil {
		return nil, fmt.Errorf("s3fs: put %s: %w", aws.ToString(in.Key), err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := md5.New()
	if in.Body != nil {
		if _, err := io.Copy(io.MultiWriter(tmp, h), in.Body); err != nil {
			tmp.Close()
			return nil, fmt.Errorf("s3fs: put %s: %w", aws.ToString(in.Key), err)
		}
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("s3fs: put %s: %w", aws.ToString(in.Key), err)
	}
	etag := quote(h.Sum(nil))

	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if in.IfMatch != nil || in.IfNoneMatch != nil {
		cur, missing, err := fileETag(path)
		if err != nil && !missing {
			return nil, fmt.Errorf("s3fs: put %s: %w", aws.ToString(in.Key), err)
		}
		if err := s3serve.CheckPut(in, !missing, cur); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, s3serve.APIError("InvalidArgument", fmt.Sprintf("s3fs: key %q: a prefix of it is an object: %v", aws.ToString(in.Key), err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, s3serve.APIError("InvalidArgument", fmt.Sprintf("s3fs: key %q: it is the prefix of other objects: %v", aws.ToString(in.Key), err))
	}
	return &s3.PutObjectOutput{ETag: aws.String(etag)}, nil
}

// GetObject returns an object (or one range of it) and its ETag.
func (s *S3) GetObject(ctx context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(in.Bucket, in.Key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		if isMissing(err) {
			return nil, s3serve.NoSuchKey()
		}
		return nil, fmt.Errorf("s3fs: get %s: %w", aws.ToString(in.Key), err)
	}
	out, err := getOpen(f, aws.ToString(in.Range))
	if err != nil {
		f.Close()
		return nil, err
	}
	return out, nil
}

// getOpen answers a GET from an open file (the object as it was when
// opened, whatever renames follow); the answer's Body closes f.
func getOpen(f *os.File, rng string) (*s3.GetObjectOutput, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("s3fs: get %s: %w", f.Name(), err)
	}
	if st.IsDir() {
		return nil, s3serve.NoSuchKey()
	}
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("s3fs: get %s: %w", f.Name(), err)
	}
	size := st.Size()
	lo, hi, contentRange := int64(0), size-1, (*string)(nil)
	if rng != "" {
		var ok bool
		if lo, hi, ok = s3serve.ByteRange(rng, size); !ok {
			return nil, s3serve.InvalidRange()
		}
		contentRange = aws.String(s3serve.ContentRange(lo, hi, size))
	}
	n := hi - lo + 1
	return &s3.GetObjectOutput{
		Body:          readCloser{io.NewSectionReader(f, lo, n), f},
		ContentLength: aws.Int64(n), ContentRange: contentRange,
		ETag: aws.String(quote(h.Sum(nil))), LastModified: aws.Time(modified(st)),
	}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

func modified(st fs.FileInfo) time.Time { return st.ModTime().UTC().Truncate(time.Second) }

// DeleteObject removes an object; a missing key is not an error. Directories
// left empty are removed up to the bucket's.
func (s *S3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, _ ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(in.Bucket, in.Key)
	if err != nil {
		return nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return &s3.DeleteObjectOutput{}, nil // a prefix, not an object
	}
	if err := os.Remove(path); err != nil && !isMissing(err) {
		return nil, fmt.Errorf("s3fs: delete %s: %w", aws.ToString(in.Key), err)
	}
	bucket := filepath.Join(s.root, aws.ToString(in.Bucket))
	for dir := filepath.Dir(path); dir != bucket && strings.HasPrefix(dir, bucket); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): stop
			break
		}
	}
	return &s3.DeleteObjectOutput{}, nil
}

// ListObjectsV2 lists keys in byte order, grouping by Delimiter, at most
// MaxKeys (default 1000) entries a page. It walks only the directory the
// prefix names (its part up to the last "/").
func (s *S3) ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bucket, err := s.bucketDir(in.Bucket)
	if err != nil {
		return nil, err
	}
	prefix := aws.ToString(in.Prefix)
	start := bucket
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		start = filepath.Join(bucket, filepath.FromSlash(prefix[:i]))
	}
	var keys []string
	objects := map[string]types.Object{}
	err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if isMissing(err) {
				return nil // the prefix names no directory, or one just deleted
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(bucket, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			if isMissing(err) {
				return nil // deleted while listing
			}
			return err
		}
		keys = append(keys, key)
		objects[key] = types.Object{Size: aws.Int64(st.Size()), LastModified: aws.Time(modified(st))}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("s3fs: list %s: %w", prefix, err)
	}
	return s3serve.ListPage(in, keys, func(k string) types.Object { return objects[k] }), nil
}
