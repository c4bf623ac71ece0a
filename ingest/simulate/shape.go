package simulate

import "github.com/streamfold/streamfold/schema"

// DefaultShapeWindow is the window Shape uses when given none: 100 records,
// the batch size of an event source mapping's typical configuration.
const DefaultShapeWindow = 100

// Shape describes the order and the size of a sequence of events: what a
// stream consumer that reads them in batches of Window records sees. It says
// what workload a benchmark ran on.
type Shape struct {
	// Events is how many events were measured.
	Events int `json:"events"`
	// Subjects is how many distinct subjects they have.
	Subjects int `json:"subjects"`
	// SameSubjectPairs counts the consecutive pairs of events that share a
	// subject (redeliveries included), out of Events-1 pairs;
	// SameSubjectShare is that count over Events-1 (0 for a single event).
	SameSubjectPairs int     `json:"sameSubjectPairs"`
	SameSubjectShare float64 `json:"sameSubjectShare"`
	// Window is the batch size, in records. The events are cut into
	// consecutive batches of Window records (the last, shorter one is left
	// out unless it is the only one); Windows is how many were measured and
	// DistinctPerWindow the mean number of distinct subjects per batch,
	// MinDistinctPerWindow the smallest.
	Window               int     `json:"window"`
	Windows              int     `json:"windows"`
	DistinctPerWindow    float64 `json:"distinctSubjectsPerWindow"`
	MinDistinctPerWindow int     `json:"minDistinctSubjectsPerWindow"`
	// PayloadBytes is the mean size of the data (the payload's JSON), in
	// bytes, per event type; PayloadBytesPerEvent over every event.
	PayloadBytes         map[string]int `json:"payloadBytes"`
	PayloadBytesPerEvent int            `json:"payloadBytesPerEvent"`
}

// MeasureShape reports the shape of events in the given order, with batches
// of window records (DefaultShapeWindow when window < 1).
func MeasureShape(events []schema.Event, window int) Shape {
	m := NewShapeMeter(window)
	for i := range events {
		m.Add(&events[i])
	}
	return m.Shape()
}

// ShapeMeter measures a Shape one event at a time, in constant memory per
// subject seen and per event type: Add each event in order, then call Shape.
// The zero value is not usable; call NewShapeMeter.
type ShapeMeter struct {
	window   int
	events   int
	subjects map[string]struct{}
	last     string
	pairs    int

	batch     map[string]struct{} // subjects of the current batch
	inBatch   int
	windows   int
	distinct  int // sum over full batches
	minBatch  int
	bytes     map[string]int64
	perType   map[string]int
	dataBytes int64
}

// NewShapeMeter returns a meter for batches of window records
// (DefaultShapeWindow when window < 1).
func NewShapeMeter(window int) *ShapeMeter {
	if window < 1 {
		window = DefaultShapeWindow
	}
	return &ShapeMeter{
		window: window, subjects: map[string]struct{}{}, batch: map[string]struct{}{},
		bytes: map[string]int64{}, perType: map[string]int{},
	}
}

// Add measures the next event.
func (m *ShapeMeter) Add(e *schema.Event) {
	if m.events > 0 && e.Subject == m.last {
		m.pairs++
	}
	m.events++
	m.last = e.Subject
	m.subjects[e.Subject] = struct{}{}
	m.bytes[e.Type] += int64(len(e.Data))
	m.perType[e.Type]++
	m.dataBytes += int64(len(e.Data))

	m.batch[e.Subject] = struct{}{}
	m.inBatch++
	if m.inBatch == m.window {
		m.closeBatch()
	}
}

func (m *ShapeMeter) closeBatch() {
	n := len(m.batch)
	if m.windows == 0 || n < m.minBatch {
		m.minBatch = n
	}
	m.windows++
	m.distinct += n
	clear(m.batch)
	m.inBatch = 0
}

// Shape returns the shape of the events added so far. It does not change
// the meter: more events can be added and measured again.
func (m *ShapeMeter) Shape() Shape {
	s := Shape{
		Events: m.events, Subjects: len(m.subjects), SameSubjectPairs: m.pairs, Window: m.window,
		Windows: m.windows, MinDistinctPerWindow: m.minBatch, PayloadBytes: map[string]int{},
	}
	if m.events > 1 {
		s.SameSubjectShare = float64(m.pairs) / float64(m.events-1)
	}
	distinct := m.distinct
	if m.windows == 0 && m.inBatch > 0 {
		// Fewer events than one window: the partial batch is the only one.
		s.Windows, s.MinDistinctPerWindow = 1, len(m.batch)
		distinct = len(m.batch)
	}
	if s.Windows > 0 {
		s.DistinctPerWindow = float64(distinct) / float64(s.Windows)
	}
	for t, n := range m.perType {
		s.PayloadBytes[t] = int(m.bytes[t] / int64(n))
	}
	if m.events > 0 {
		s.PayloadBytesPerEvent = int(m.dataBytes / int64(m.events))
	}
	return s
}
