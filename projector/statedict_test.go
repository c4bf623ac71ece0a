package projector

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/dict"
	"github.com/klauspost/compress/zstd"

	"github.com/streamfold/streamfold/ingest/simulate"
	"github.com/streamfold/streamfold/internal/laptop/testclock"
	"github.com/streamfold/streamfold/schema"
)

var trainStateDict = flag.Bool("train-state-dict", false, "train the state dictionary StateDictionary into zdict/<id>.zdict (never overwritten)")

// stateSamples folds a simulate workload into a MemStore and returns each
// aggregate's envelope JSON (what compressState compresses).
func stateSamples(t testing.TB, cfg simulate.Config) [][]byte {
	t.Helper()
	evs, _, err := simulate.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemStore()
	p, err := New(m, Config{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	var batch []Input
	for _, e := range evs {
		in, ok, err := InputOf(e, "1")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			batch = append(batch, in)
		}
		if len(batch) == 500 {
			p.Project(context.Background(), batch)
			batch = nil
		}
	}
	p.Project(context.Background(), batch)
	var out [][]byte
	for _, subj := range sortedKeys(m.states) {
		st := m.states[subj]
		rows, err := appliedRows(st.Applied)
		if err != nil {
			t.Fatal(err)
		}
		b, err := marshalEnvelope(st.State, rows, st.ItemVersions)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestStateDictionary checks the embedded state dictionary; with
// -train-state-dict it trains a new one into zdict/<StateDictionary>.zdict
// when that file does not exist yet (a dictionary is immutable once states
// compressed with it may exist: train another under a new id instead).
// The samples are the states of simulate workloads of every domain, with
// GitHub's full webhooks; training is not deterministic (the builder
// iterates maps), which is why the bytes are committed.
//
//	go test ./projector -run TestStateDictionary -train-state-dict
func TestStateDictionary(t *testing.T) {
	path := filepath.Join("zdict", strconv.Itoa(StateDictionary)+".zdict")
	if *trainStateDict {
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s exists; dictionaries are immutable (train another under a new id)", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		start := testclock.RecentMonday(3)
		var samples [][]byte
		for seed := int64(100); seed < 104; seed++ {
			samples = append(samples, stateSamples(t, simulate.Config{Seed: seed, Events: 5000, Days: 1, Start: start, GitHubPayloads: simulate.PayloadsFull})...)
		}
		d, err := dict.BuildZstdDict(samples, dict.Options{MaxDictSize: 16 << 10, HashBytes: 6, ZstdDictID: StateDictionary})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d bytes from %d states", path, len(d), len(samples))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || string(b[:4]) != "\x37\xa4\x30\xec" {
		t.Fatalf("%s is not a zstd dictionary", path)
	}
	if id := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24; id != StateDictionary {
		t.Fatalf("%s: header says id %d, want %d", path, id, StateDictionary)
	}
}

// TestStateBytesNotGrown: on the states of a workload the dictionary was
// not trained on, the states as stored now (raw when the item fits one
// write unit, else compressed with the dictionary: stateItem) cost no more
// write units per state in total (the state item's size rounded up to
// WriteUnitBytes) than compressing every state did, with or without the
// dictionary; and the dictionary's frames are smaller in total than the
// ones before it (zstd's default level, no dictionary). Raw states make
// the stored bytes larger (storage, not writes), which the log shows.
func TestStateBytesNotGrown(t *testing.T) {
	old, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	samples := stateSamples(t, simulate.Config{Seed: 7, Events: 3000, Days: 1, Start: testclock.RecentMonday(3), GitHubPayloads: simulate.PayloadsFull})
	const itemOverhead = 100 // the state item's other attributes and names
	units := func(n int) int { return (n + itemOverhead + schema.WriteUnitBytes - 1) / schema.WriteUnitBytes }
	var oldBytes, dictBytes, storedBytes, oldUnits, dictUnits, storedUnits, raw int
	for _, s := range samples {
		o, d := len(old.EncodeAll(s, nil)), len(compressState(s))
		stored := d
		if len(s)+itemOverhead <= schema.WriteUnitBytes {
			stored = len(s)
			raw++
		}
		oldBytes, dictBytes, storedBytes = oldBytes+o, dictBytes+d, storedBytes+stored
		oldUnits, dictUnits, storedUnits = oldUnits+units(o), dictUnits+units(d), storedUnits+units(stored)
	}
	t.Logf("%d states (%d stored raw): %d bytes without the dictionary, %d with it, %d as stored; write units %d, %d, %d", len(samples), raw, oldBytes, dictBytes, storedBytes, oldUnits, dictUnits, storedUnits)
	if dictBytes > oldBytes || dictUnits > oldUnits {
		t.Errorf("the dictionary's frames grew: %d bytes before, %d now; %d write units before, %d now", oldBytes, dictBytes, oldUnits, dictUnits)
	}
	if storedUnits > dictUnits {
		t.Errorf("raw states cost more write units: %d, all compressed %d", storedUnits, dictUnits)
	}
}
