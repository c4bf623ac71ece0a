package archiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The Iceberg library reads and writes table metadata, manifest lists and
// manifests through its io.IO, chosen by the location's scheme. Instead of
// its gocloud S3 backend (a second S3 client with its own configuration),
// the archive registers the "s3" scheme over the archive's own S3API: one
// client, one ExpectedBucketOwner, the same path-style endpoint locally, and
// the same fault injection in tests. A catalog's properties name the client
// (s3ClientProp); clients are registered per process (registerS3).

// s3ClientProp is the catalog property naming the registered S3 client the
// "s3" scheme uses for that catalog's tables.
const s3ClientProp = "streamfold.s3-client"

// footerRead is how much of an object's end one open reads at once: a
// Parquet footer, and all of a small metadata or manifest file.
const footerRead = 64 << 10

type s3Client struct {
	api   S3API
	owner string
}

var (
	s3Clients   sync.Map // id -> s3Client
	s3ClientSeq struct {
		sync.Mutex
		n int
	}
)

func init() {
	iceio.Register("s3", func(_ context.Context, _ *url.URL, props map[string]string) (iceio.IO, error) {
		id := props[s3ClientProp]
		c, ok := s3Clients.Load(id)
		if !ok {
			return nil, fmt.Errorf("archiver: no S3 client %q registered for the catalog (it is registered by archiver.New)", id)
		}
		return &s3FS{c: c.(s3Client)}, nil
	})
}

// registerS3 registers a client for the "s3" scheme and returns its id, the
// value of a catalog's s3ClientProp.
func registerS3(api S3API, owner string) string {
	s3ClientSeq.Lock()
	s3ClientSeq.n++
	id := strconv.Itoa(s3ClientSeq.n)
	s3ClientSeq.Unlock()
	s3Clients.Store(id, s3Client{api: api, owner: owner})
	return id
}

// s3FS is the iceberg io.IO of one S3 client. Names are s3://bucket/key.
type s3FS struct{ c s3Client }

var (
	_ iceio.WriteFileIO = (*s3FS)(nil)
	_ iceio.ReadFileIO  = (*s3FS)(nil)
	_ iceio.ListableIO  = (*s3FS)(nil)
)

func splitS3(name string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(name, "s3://")
	if !ok {
		rest, ok = strings.CutPrefix(name, "s3a://")
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return "", "", fmt.Errorf("%w: %q", ErrBadURI, name)
	}
	return bucket, key, nil
}

func (f *s3FS) ownerPtr() *string {
	if f.c.owner == "" {
		return nil
	}
	return aws.String(f.c.owner)
}

func pathErr(op, name string, err error) error {
	if isNotFound(err) {
		err = errors.Join(fs.ErrNotExist, err)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Open reads the object's last footerRead bytes (all of a small file) and
// serves other ranges with ranged GETs.
func (f *s3FS) Open(name string) (iceio.File, error) {
	bucket, key, err := splitS3(name)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	ctx := context.Background()
	out, err := f.c.api.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), ExpectedBucketOwner: f.ownerPtr(),
		Range: aws.String("bytes=-" + strconv.Itoa(footerRead)),
	}, rangedGet)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	defer out.Body.Close()
	tail, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	size := int64(len(tail))
	if cr := aws.ToString(out.ContentRange); cr != "" {
		if _, total, ok := strings.Cut(cr, "/"); ok {
			if n, err := strconv.ParseInt(total, 10, 64); err == nil {
				size = n
			}
		}
	}
	return &s3File{fs: f, name: name, bucket: bucket, key: key, size: size, tail: tail, modified: aws.ToTime(out.LastModified)}, nil
}

func (f *s3FS) ReadFile(name string) ([]byte, error) {
	bucket, key, err := splitS3(name)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	out, err := f.c.api.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ExpectedBucketOwner: f.ownerPtr()})
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, pathErr("read", name, err)
	}
	return b, nil
}

func (f *s3FS) Remove(name string) error {
	bucket, key, err := splitS3(name)
	if err != nil {
		return pathErr("remove", name, err)
	}
	_, err = f.c.api.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ExpectedBucketOwner: f.ownerPtr()})
	if err != nil && !isNotFound(err) {
		return pathErr("remove", name, err)
	}
	return nil
}

func (f *s3FS) WriteFile(name string, p []byte) error {
	bucket, key, err := splitS3(name)
	if err != nil {
		return pathErr("write", name, err)
	}
	_, err = f.c.api.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(p),
		ContentLength: aws.Int64(int64(len(p))), ExpectedBucketOwner: f.ownerPtr(),
	})
	if err != nil {
		return pathErr("write", name, err)
	}
	return nil
}

// Create buffers the file and puts it on Close (metadata and manifest
// files are small).
func (f *s3FS) Create(name string) (iceio.FileWriter, error) {
	if _, _, err := splitS3(name); err != nil {
		return nil, pathErr("create", name, err)
	}
	return &s3Writer{fs: f, name: name}, nil
}

// WalkDir lists every object under root (for orphan-file cleanup).
func (f *s3FS) WalkDir(root string, fn fs.WalkDirFunc) error {
	bucket, prefix, err := splitS3(root)
	if err != nil {
		return fn(root, nil, err)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), ExpectedBucketOwner: f.ownerPtr()}
	for {
		out, err := f.c.api.ListObjectsV2(context.Background(), in)
		if err != nil {
			return fn(root, nil, err)
		}
		for _, o := range out.Contents {
			e := s3Entry{name: aws.ToString(o.Key), size: aws.ToInt64(o.Size), modified: aws.ToTime(o.LastModified)}
			if err := fn("s3://"+bucket+"/"+e.name, e, nil); err != nil {
				if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
					return nil
				}
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextContinuationToken) == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// s3Entry is a listed object as a DirEntry and FileInfo.
type s3Entry struct {
	name     string
	size     int64
	modified time.Time
}

func (e s3Entry) Name() string               { return e.name[strings.LastIndexByte(e.name, '/')+1:] }
func (e s3Entry) IsDir() bool                { return false }
func (e s3Entry) Type() fs.FileMode          { return 0 }
func (e s3Entry) Info() (fs.FileInfo, error) { return e, nil }
func (e s3Entry) Size() int64                { return e.size }
func (e s3Entry) Mode() fs.FileMode          { return 0o444 }
func (e s3Entry) ModTime() time.Time         { return e.modified }
func (e s3Entry) Sys() any                   { return nil }

// rangedGet turns off the response checksum check of a ranged GET: S3
// returns no checksum for part of an object, and the SDK would log that on
// every read.
func rangedGet(o *s3.Options) {
	o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
}

// s3File is an open object: its tail in memory, other ranges on demand.
type s3File struct {
	fs                *s3FS
	name, bucket, key string
	size              int64
	tail              []byte // the last len(tail) bytes
	modified          time.Time
	off               int64
}

func (r *s3File) Stat() (fs.FileInfo, error) {
	return s3Entry{name: r.key, size: r.size, modified: r.modified}, nil
}

func (r *s3File) Close() error { return nil }

func (r *s3File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, pathErr("read", r.name, errors.New("negative offset"))
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if tailStart := r.size - int64(len(r.tail)); off >= tailStart {
		n := copy(p[:want], r.tail[off-tailStart:])
		if int64(n) < int64(len(p)) {
			return n, io.EOF
		}
		return n, nil
	}
	out, err := r.fs.c.api.GetObject(context.Background(), &s3.GetObjectInput{
		Bucket: aws.String(r.bucket), Key: aws.String(r.key), ExpectedBucketOwner: r.fs.ownerPtr(),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+want-1)),
	}, rangedGet)
	if err != nil {
		return 0, pathErr("read", r.name, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:want])
	if err != nil {
		return n, pathErr("read", r.name, err)
	}
	if int64(n) < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads sequentially. Sequential readers (the Avro manifests and
// manifest lists) read a file whole, a few KiB at a time: the first Read
// before the cached tail fetches everything from there to the tail in one
// ranged GET, so such a file costs at most two GETs whatever its size.
// Random access (ReadAt: the Parquet readers) is unchanged.
func (r *s3File) Read(p []byte) (int, error) {
	if tailStart := r.size - int64(len(r.tail)); len(p) > 0 && r.off < tailStart {
		head := make([]byte, tailStart-r.off)
		if _, err := r.ReadAt(head, r.off); err != nil {
			return 0, err
		}
		r.tail = append(head, r.tail...)
	}
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	return n, err
}

func (r *s3File) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, pathErr("seek", r.name, errors.New("bad whence"))
	}
	if offset < 0 {
		return 0, pathErr("seek", r.name, errors.New("negative position"))
	}
	r.off = offset
	return offset, nil
}

// s3Writer buffers a created file until Close.
type s3Writer struct {
	fs     *s3FS
	name   string
	buf    bytes.Buffer
	closed bool
}

func (w *s3Writer) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *s3Writer) ReadFrom(r io.Reader) (int64, error) { return w.buf.ReadFrom(r) }

func (w *s3Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.fs.WriteFile(w.name, w.buf.Bytes())
}
