package reconcile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// entry is one event as the archive comparison holds it: its key and
// content hash; inWindow marks an archived one recorded in the window.
type entry struct {
	subject, id, hash string
	inWindow          bool
}

// key is the event-table key of e.
func (e entry) key() string { return e.subject + "\x00" + e.id }

// writeEntry appends e to w: three length-prefixed strings and a flag.
func writeEntry(w *bufio.Writer, e entry) error {
	var buf [binary.MaxVarintLen64]byte
	for _, s := range []string{e.subject, e.id, e.hash} {
		n := binary.PutUvarint(buf[:], uint64(len(s)))
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		if _, err := w.WriteString(s); err != nil {
			return err
		}
	}
	flag := byte(0)
	if e.inWindow {
		flag = 1
	}
	return w.WriteByte(flag)
}

// readEntries calls fn with every entry of the file at path, in order.
func readEntries(path string, fn func(entry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	str := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b), err
	}
	for {
		var e entry
		if e.subject, err = str(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reconcile: read %s: %w", path, err)
		}
		if e.id, err = str(); err == nil {
			e.hash, err = str()
		}
		var flag byte
		if err == nil {
			flag, err = r.ReadByte()
		}
		if err != nil {
			return fmt.Errorf("reconcile: read %s: truncated entry: %w", path, err)
		}
		e.inWindow = flag == 1
		if err := fn(e); err != nil {
			return err
		}
	}
}

// bucketOf spreads keys over n buckets.
func bucketOf(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

// part names one archive partition: an archive table and an event date.
type part struct{ table, date string }

// spillFile is one file of entries being written.
type spillFile struct {
	path string
	f    *os.File
	w    *bufio.Writer
	n    int
}

func createSpill(path string) (*spillFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("reconcile: spill: %w", err)
	}
	return &spillFile{path: path, f: f, w: bufio.NewWriterSize(f, 16<<10)}, nil
}

func (s *spillFile) add(e entry) error {
	s.n++
	if err := writeEntry(s.w, e); err != nil {
		return fmt.Errorf("reconcile: spill %s: %w", s.path, err)
	}
	return nil
}

func (s *spillFile) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("reconcile: spill %s: %w", s.path, err)
	}
	return nil
}

// spill keeps the window's events per archive partition in temporary
// files, so that the scan holds none of them: safe for concurrent use.
type spill struct {
	dir    string
	mu     sync.Mutex
	files  map[part]*spillFile
	closed bool
}

func newSpill(tempDir string) (*spill, error) {
	dir, err := os.MkdirTemp(tempDir, "streamfold-reconcile-")
	if err != nil {
		return nil, fmt.Errorf("reconcile: spill directory: %w", err)
	}
	return &spill{dir: dir, files: map[part]*spillFile{}}, nil
}

// add appends e to p's file.
func (s *spill) add(p part, e entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[p]
	if !ok {
		var err error
		if f, err = createSpill(filepath.Join(s.dir, fmt.Sprintf("t%d", len(s.files)))); err != nil {
			return err
		}
		s.files[p] = f
	}
	return f.add(e)
}

// finish closes every file and returns the partitions, sorted.
func (s *spill) finish() ([]part, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	var parts []part
	for p, f := range s.files {
		errs = append(errs, f.close())
		parts = append(parts, p)
	}
	s.closed = true
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].table != parts[j].table {
			return parts[i].table < parts[j].table
		}
		return parts[i].date < parts[j].date
	})
	return parts, errors.Join(errs...)
}

// remove deletes the spill directory (closing what is still open).
func (s *spill) remove() {
	s.mu.Lock()
	if !s.closed {
		for _, f := range s.files {
			_ = f.close()
		}
	}
	s.mu.Unlock()
	_ = os.RemoveAll(s.dir)
}

// path returns the file of p ("" when p has none) and how many entries it holds.
func (s *spill) path(p part) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[p]; ok {
		return f.path, f.n
	}
	return "", 0
}
