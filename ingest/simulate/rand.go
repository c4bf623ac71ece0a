package simulate

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"time"
)

// All randomness comes from one PCG stream and is turned into values with
// integer arithmetic only, so that the output does not depend on the
// platform's floating point (fused multiply-adds, math.Exp): the same seed
// gives the same bytes everywhere.

const hexDigits = "0123456789abcdef"

func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
}

// chance reports true with probability permille/1000.
func (g *gen) chance(permille int) bool { return g.r.IntN(1000) < permille }

// intIn returns a uniform integer in [lo, hi].
func (g *gen) intIn(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.r.IntN(hi-lo+1)
}

// between returns a uniform duration in [lo, hi), with millisecond granularity.
func (g *gen) between(lo, hi time.Duration) time.Duration {
	span := int64((hi - lo) / time.Millisecond)
	if span <= 0 {
		return lo
	}
	return lo + time.Duration(g.r.Int64N(span))*time.Millisecond
}

// skewed returns a right-skewed duration: 70% in [lo, mid), 30% in [mid, hi).
// Service and job durations look like this: mostly short, a long tail.
func (g *gen) skewed(lo, mid, hi time.Duration) time.Duration {
	if g.chance(700) {
		return g.between(lo, mid)
	}
	return g.between(mid, hi)
}

// weighted returns an index drawn with the given integer weights.
func (g *gen) weighted(weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return 0
	}
	n := g.r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// uuid returns a random (version 4) UUID in canonical form.
func (g *gen) uuid() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], g.r.Uint64())
	binary.BigEndian.PutUint64(b[8:], g.r.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			s[j] = '-'
			j++
		}
		s[j], s[j+1] = hexDigits[c>>4], hexDigits[c&0x0f]
		j += 2
	}
	return string(s[:])
}

// hex returns n random lowercase hex digits.
func (g *gen) hex(n int) string {
	return g.fromAlphabet(n, hexDigits)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// alnum returns n random letters and digits.
func (g *gen) alnum(n int) string { return g.fromAlphabet(n, alnum) }

func (g *gen) fromAlphabet(n int, alphabet string) string {
	b := make([]byte, n)
	var x uint64
	for i := range b {
		if i%8 == 0 {
			x = g.r.Uint64()
		}
		b[i] = alphabet[int(x&0xff)%len(alphabet)]
		x >>= 8
	}
	return string(b)
}

// money turns an amount in millionths into a float with at most six
// decimals; division by a power of ten is exactly rounded everywhere.
func money(micros int64) float64 { return float64(micros) / 1e6 }

// cents turns hundredths into a float with at most two decimals.
func cents(c int64) float64 { return float64(c) / 100 }

// seconds turns milliseconds into a float number of seconds.
func seconds(ms int64) float64 { return float64(ms) / 1000 }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// sec and msec truncate a time to whole seconds or milliseconds.
func sec(t time.Time) time.Time  { return t.Truncate(time.Second) }
func msec(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

func ptr[T any](v T) *T { return &v }
