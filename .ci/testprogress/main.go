// testprogress turns `go test -json` on its standard input into go test's
// usual output, as each package and test finishes rather than when a
// package ends, for .ci/test.sh:
//
//   - a package's result line ("ok  pkg 12.3s", "FAIL pkg", "?  pkg [no test
//     files]") and build errors, as they come;
//   - the full output of every failing test (its "--- FAIL:" lines, logs and
//     panics), as go test prints it, so that a log reads the same;
//   - with -tests, one line per finished top-level test of the packages
//     named ("projector: TestFaultInjection passed in 1m32s");
//   - when nothing was printed for -heartbeat (default 25s), one line that
//     says what is still running and for how long.
//
// Passing tests' output is dropped, as go test drops it without -v. Lines
// that are not test2json events are copied as they are. The exit status is
// 0 unless reading fails: go test's own status says whether tests passed
// (set -o pipefail).
//
// Usage: go test -json ./... 2>&1 | testprogress [-tests projector,query] [-heartbeat 25s]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type running struct {
	pkg, test string
	since     time.Time
}

type printer struct {
	mu        sync.Mutex
	out       io.Writer
	each      []string // package path suffixes whose top-level tests get a line each
	start     time.Time
	last      time.Time
	buf       map[string]*strings.Builder // pkg + "\x00" + top-level test -> its output
	run       map[string]running          // pkg + "\x00" + top-level test
	pkgsDone  int
	heartbeat time.Duration
}

func top(test string) string { t, _, _ := strings.Cut(test, "/"); return t }

func short(pkg string) string { return pkg[strings.LastIndex(pkg, "/")+1:] }

func (p *printer) print(s string) {
	io.WriteString(p.out, s)
	p.last = time.Now()
}

func (p *printer) wantsEach(pkg string) bool {
	for _, s := range p.each {
		if s == "all" || pkg == s || strings.HasSuffix(pkg, "/"+s) {
			return true
		}
	}
	return false
}

// flush prints the buffered output of pkg's unfinished tests (a panic or a
// time-out ends the package before they end).
func (p *printer) flush(pkg string) {
	var keys []string
	for k := range p.buf {
		if strings.HasPrefix(k, pkg+"\x00") {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.print(p.buf[k].String())
		delete(p.buf, k)
		delete(p.run, k)
	}
}

func (p *printer) handle(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var e event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Action == "" {
		p.print(line + "\n")
		return
	}
	key := e.Package + "\x00" + top(e.Test)
	switch {
	case e.Action == "build-output":
		p.print(e.Output)
	case e.Test == "" && e.Action == "output":
		if e.Output == "PASS\n" {
			return
		}
		if strings.HasPrefix(e.Output, "FAIL") {
			p.flush(e.Package)
		}
		p.print(e.Output)
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		p.flush(e.Package)
		p.pkgsDone++
	case e.Test == "":
	case e.Action == "run" && !strings.Contains(e.Test, "/"):
		p.run[key] = running{pkg: e.Package, test: e.Test, since: time.Now()}
	case e.Action == "output":
		b := p.buf[key]
		if b == nil {
			b = &strings.Builder{}
			p.buf[key] = b
		}
		b.WriteString(e.Output)
	case strings.Contains(e.Test, "/"):
		// A subtest's result: its lines are in its top-level test's output.
	case e.Action == "fail":
		if b := p.buf[key]; b != nil {
			p.print(b.String())
		}
		delete(p.buf, key)
		delete(p.run, key)
	case e.Action == "pass" || e.Action == "skip":
		delete(p.buf, key)
		delete(p.run, key)
		if p.wantsEach(e.Package) {
			verb := map[string]string{"pass": "passed", "skip": "skipped"}[e.Action]
			p.print(fmt.Sprintf("%s: %s %s in %s\n", short(e.Package), e.Test, verb, dur(time.Duration(e.Elapsed*float64(time.Second)))))
		}
	}
}

func dur(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// beat prints what is running when nothing was printed for p.heartbeat.
func (p *printer) beat(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.last) < p.heartbeat {
		return
	}
	rs := make([]running, 0, len(p.run))
	for _, r := range p.run {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b running) int { return a.since.Compare(b.since) })
	var names []string
	for _, r := range rs[:min(3, len(rs))] {
		names = append(names, fmt.Sprintf("%s %s (%s)", short(r.pkg), r.test, dur(now.Sub(r.since))))
	}
	what := "compiling or starting the next package"
	if len(names) > 0 {
		what = "running " + strings.Join(names, ", ")
		if len(rs) > 3 {
			what += fmt.Sprintf(" and %d more", len(rs)-3)
		}
	}
	p.print(fmt.Sprintf("... %s: %d packages done; %s\n", dur(now.Sub(p.start)), p.pkgsDone, what))
}

func main() {
	tests := flag.String("tests", "", "comma-separated package paths (or their last elements, or all) whose top-level tests get a line each as they finish")
	heartbeat := flag.Duration("heartbeat", 25*time.Second, "print what is running after this long without output")
	flag.Parse()
	now := time.Now()
	p := &printer{out: os.Stdout, start: now, last: now, buf: map[string]*strings.Builder{}, run: map[string]running{}, heartbeat: *heartbeat}
	if *tests != "" {
		p.each = strings.Split(*tests, ",")
	}
	if *heartbeat > 0 {
		go func() {
			for t := range time.Tick(min(*heartbeat/5, time.Second)) {
				p.beat(t)
			}
		}()
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		p.handle(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
}
