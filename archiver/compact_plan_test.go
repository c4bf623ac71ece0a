package archiver

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestPlanCompaction(t *testing.T) {
	l := layout{bucket: "b", prefix: "p"}
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	old, young := now.Add(-48*time.Hour), now.Add(-time.Hour)
	k := func(s string) string { return l.dataDir("messages", "2026-01-05") + s }
	info := func(objs ...listed) map[string]listed {
		m := map[string]listed{}
		for _, o := range objs {
			m[o.key] = o
		}
		return m
	}
	obj := func(name string, size int64, mod time.Time) listed {
		return listed{key: k(name), size: size, modified: mod}
	}

	cases := []struct {
		name        string
		objs        []listed
		target      int64
		minAge      time.Duration
		wantGroups  [][]string
		wantSkipped int
	}{
		{"nothing listed", nil, 100, 0, nil, 0},
		{"one small object: nothing to merge", []listed{obj("1", 10, old)}, 100, 0, nil, 1},
		{"small objects pack up to the target", []listed{obj("1", 40, old), obj("2", 40, old), obj("3", 40, old), obj("4", 40, old), obj("5", 10, old)},
			100, 0, [][]string{{k("1"), k("2")}, {k("3"), k("4"), k("5")}}, 0},
		{"objects at the target size stay", []listed{obj("1", 100, old), obj("2", 30, old), obj("3", 30, old)},
			100, 0, [][]string{{k("2"), k("3")}}, 1},
		{"objects younger than MinAge stay", []listed{obj("1", 10, old), obj("2", 10, young), obj("3", 10, old)},
			100, 24 * time.Hour, [][]string{{k("1"), k("3")}}, 1},
		{"negative MinAge takes every object", []listed{obj("1", 10, young), obj("2", 10, young)},
			100, -1, [][]string{{k("1"), k("2")}}, 0},
		{"a lone leftover is not rewritten", []listed{obj("1", 60, old), obj("2", 60, old), obj("3", 30, old)},
			100, 0, [][]string{{k("2"), k("3")}}, 1},
	}
	for _, c := range cases {
		var keys []string
		for i := len(c.objs) - 1; i >= 0; i-- { // manifest order does not matter
			keys = append(keys, c.objs[i].key)
		}
		p, err := planCompaction(l, "messages", "2026-01-05", keys, info(c.objs...), c.target, c.minAge, now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(p.Groups, c.wantGroups) || p.Skipped != c.wantSkipped {
			t.Errorf("%s: groups %v skipped %d; want %v skipped %d", c.name, p.Groups, p.Skipped, c.wantGroups, c.wantSkipped)
		}
		if len(p.Outputs) != len(p.Groups) {
			t.Errorf("%s: %d outputs for %d groups", c.name, len(p.Outputs), len(p.Groups))
		}
		if len(p.Groups) > 0 && p.Outputs[0] != l.compactKey("messages", "2026-01-05", p.ID, 0) {
			t.Errorf("%s: output %s not named after the plan id %s", c.name, p.Outputs[0], p.ID)
		}
	}
}

func TestPlanCompactionIsDeterministic(t *testing.T) {
	l := layout{bucket: "b"}
	now := time.Now()
	objs := map[string]listed{}
	var keys []string
	for _, n := range []string{"a", "b", "c", "d"} {
		key := l.dataDir("messages", "2026-01-05") + n
		objs[key] = listed{key: key, size: 10, modified: now.Add(-48 * time.Hour)}
		keys = append(keys, key)
	}
	p1, _ := planCompaction(l, "messages", "2026-01-05", keys, objs, 100, 0, now)
	p2, _ := planCompaction(l, "messages", "2026-01-05", []string{keys[3], keys[1], keys[0], keys[2]}, objs, 100, 0, now)
	if p1.ID == "" || !reflect.DeepEqual(p1, p2) {
		t.Fatalf("same inputs, different plans:\n%+v\n%+v", p1, p2)
	}
	p3, _ := planCompaction(l, "messages", "2026-01-05", keys[:3], objs, 100, 0, now)
	if p3.ID == p1.ID {
		t.Fatal("different inputs, same plan id: outputs would collide")
	}
}

func TestPlanCompactionMissingObject(t *testing.T) {
	l := layout{bucket: "b"}
	_, err := planCompaction(l, "messages", "2026-01-05", []string{"messages/event_date=2026-01-05/gone"}, nil, 100, 0, time.Now())
	if !errors.Is(err, ErrCorruptObject) {
		t.Fatalf("a manifest listing a missing object: %v, want ErrCorruptObject", err)
	}
}
