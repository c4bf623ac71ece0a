package maintenance

import (
	"encoding/json"
	"fmt"
	"time"
)

// Task names.
const (
	TaskCompact = "compact"
	TaskVerify  = "verify"
)

// Tasks are the tasks Runner runs.
var Tasks = []string{TaskCompact, TaskVerify}

// Invocation is the payload a schedule sends: {"maintenance": Event}.
type Invocation struct {
	Maintenance *Event `json:"maintenance"`
}

// Event is one maintenance request.
type Event struct {
	// Task: TaskCompact or TaskVerify.
	Task string `json:"task"`
	// Date (YYYY-MM-DD, UTC) overrides the day compact works on; empty
	// means Config.DaysAgo days before the invocation's day.
	Date string `json:"date,omitempty"`
}

// Validate names the bad field.
func (e Event) Validate() error {
	switch e.Task {
	case TaskCompact, TaskVerify:
	case "":
		return fmt.Errorf("maintenance: task is required (%v)", Tasks)
	default:
		return fmt.Errorf("%w: task %q (want one of %v)", ErrUnknownTask, e.Task, Tasks)
	}
	if e.Date != "" {
		if e.Task != TaskCompact {
			return fmt.Errorf("maintenance: date: only task %q takes a date, got %q for %q", TaskCompact, e.Date, e.Task)
		}
		if _, err := time.Parse(time.DateOnly, e.Date); err != nil {
			return fmt.Errorf("maintenance: date: must be YYYY-MM-DD, got %q", e.Date)
		}
	}
	return nil
}

// ParseInvocation reports whether payload is a maintenance invocation
// ({"maintenance": {...}}) and, if so, its validated event. A payload
// without the "maintenance" key is not one (ok false, no error): the caller
// treats it as a stream batch.
func ParseInvocation(payload []byte) (Event, bool, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(payload, &probe); err != nil {
		return Event{}, false, nil
	}
	raw, ok := probe["maintenance"]
	if !ok {
		return Event{}, false, nil
	}
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return Event{}, true, fmt.Errorf("maintenance: want {\"maintenance\": {\"task\": ...}}: %w", err)
	}
	if err := ev.Validate(); err != nil {
		return Event{}, true, err
	}
	return ev, true, nil
}
