package archiver

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// A manifest is the Hive symlink file of one partition: one s3:// URI per
// line, sorted, each line ending in "\n". It is the only thing that makes a
// data object visible: readers (Athena through SymlinkTextInputFormat,
// Objects, Scan) read the objects it lists and nothing else.

// parseManifest returns the URIs of a manifest, in file order.
func parseManifest(body []byte) []string {
	var out []string
	for line := range strings.SplitSeq(string(body), "\n") {
		line = strings.TrimSpace(line)
		if line != "" {
			out = append(out, line)
		}
	}
	// Written sorted and without duplicates (formatManifest); sorted again
	// so that a manifest edited by hand still answers has correctly.
	slices.Sort(out)
	return slices.Compact(out)
}

// formatManifest renders URIs as a manifest: sorted, without duplicates.
func formatManifest(uris []string) []byte {
	u := slices.Clone(uris)
	slices.Sort(u)
	u = slices.Compact(u)
	var b strings.Builder
	for _, s := range u {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// addURIs returns cur with add appended (sorted, unique), and whether that
// changed anything: adding a URI that is listed already is a no-op.
func addURIs(cur, add []string) ([]string, bool) {
	have := make(map[string]bool, len(cur))
	for _, u := range cur {
		have[u] = true
	}
	next := slices.Clone(cur)
	changed := false
	for _, u := range add {
		if !have[u] {
			have[u] = true
			next = append(next, u)
			changed = true
		}
	}
	slices.Sort(next)
	return slices.Compact(next), changed
}

// replaceURIs swaps the URIs in remove for those in add, keeping every other
// URI of cur (such as URIs added since the caller read the manifest). It
// returns missing, the URIs of remove that cur does not list: then nothing
// is replaced.
func replaceURIs(cur, remove, add []string) (next, missing []string) {
	have := make(map[string]bool, len(cur))
	for _, u := range cur {
		have[u] = true
	}
	for _, u := range remove {
		if !have[u] {
			missing = append(missing, u)
		}
	}
	if len(missing) > 0 {
		return nil, missing
	}
	drop := make(map[string]bool, len(remove))
	for _, u := range remove {
		drop[u] = true
	}
	for _, u := range cur {
		if !drop[u] {
			next = append(next, u)
		}
	}
	next = append(next, add...)
	slices.Sort(next)
	return slices.Compact(next), nil
}

// manifest is a manifest as read: its URIs and ETag (empty: absent).
type manifest struct {
	uris []string
	etag string
}

// has reports whether the manifest lists uri (uris are sorted: parseManifest).
func (m manifest) has(uri string) bool {
	_, ok := slices.BinarySearch(m.uris, uri)
	return ok
}

// readManifest reads a partition's manifest; an absent one is empty.
func (a *Archive) readManifest(ctx context.Context, table, date string) (manifest, error) {
	obj, err := a.get(ctx, a.l.manifestKey(table, date))
	if errors.Is(err, ErrNotFound) {
		return manifest{}, nil
	}
	if err != nil {
		return manifest{}, err
	}
	return manifest{uris: parseManifest(obj.body), etag: obj.etag}, nil
}

// updateManifest is an optimistic read-modify-write of a manifest: read it,
// let change compute the new URIs, and write them back on the condition that
// the manifest is still the one read (If-Match its ETag, or If-None-Match *
// when it was absent). When another writer got there first, it starts over,
// up to Config.ManifestRetries times, with jittered backoff. change returns
// ok=false to leave the manifest as it is.
func (a *Archive) updateManifest(ctx context.Context, table, date string, change func(cur manifest) (next []string, ok bool, err error)) error {
	key := a.l.manifestKey(table, date)
	for attempt := 0; ; attempt++ {
		cur, err := a.readManifest(ctx, table, date)
		if err != nil {
			return err
		}
		next, ok, err := change(cur)
		if err != nil || !ok {
			return err
		}
		_, err = a.put(ctx, key, formatManifest(next), "text/plain", putCond{ifAbsent: cur.etag == "", ifMatch: cur.etag})
		if err == nil {
			return nil
		}
		if !isPreconditionFailed(err) {
			return err
		}
		if attempt+1 >= a.cfg.ManifestRetries {
			return &ObjectError{Op: "PutObject", Key: key, Err: errors.Join(ErrManifestContention, err)}
		}
		d := time.Duration(min(1<<min(attempt, 8), 200)) * time.Millisecond
		d += time.Duration(rand.Int64N(int64(d) + 1))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}
