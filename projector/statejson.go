package projector

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// marshalState is json.Marshal(agg), the state as stored and compared:
// the hottest states (jsonAppender) write their JSON without reflection,
// byte for byte what json.Marshal writes (TestMarshalStateLikeJSON,
// FuzzMarshalJobState); a value such an appender does not write as
// json.Marshal would (a float that is not finite, a time json.Marshal
// refuses) makes it give up, and json.Marshal decides.
func marshalState(agg Aggregate) ([]byte, error) {
	if a, ok := agg.(jsonAppender); ok {
		w := jsonWriter{b: make([]byte, 0, 2048)}
		a.appendJSON(&w)
		if w.ok() {
			return w.b, nil
		}
	}
	return json.Marshal(agg)
}

// jsonAppender is a state that writes its own JSON into a jsonWriter.
type jsonAppender interface{ appendJSON(w *jsonWriter) }

// jsonWriter appends JSON as encoding/json writes it (HTML-escaped
// strings, ES6 floats, RFC 3339 times). After a value it cannot write
// exactly (a float that is not finite, a time out of RFC 3339's range),
// failed is set and the output is to be thrown away.
type jsonWriter struct {
	b      []byte
	failed bool
	// comma is whether the object being written has a member already.
	comma bool
}

func (w *jsonWriter) ok() bool { return !w.failed }

// open starts an object; close ends it. Objects do not nest across
// members here: a member's object value is written between its own open
// and close, which restore comma for the enclosing object.
func (w *jsonWriter) open() bool {
	w.b = append(w.b, '{')
	c := w.comma
	w.comma = false
	return c
}

func (w *jsonWriter) close(outer bool) {
	w.b = append(w.b, '}')
	w.comma = outer
}

// key writes a member's name (a constant without characters to escape).
func (w *jsonWriter) key(name string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *jsonWriter) int(v int64) { w.b = strconv.AppendInt(w.b, v, 10) }

func (w *jsonWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// string writes s as encoding/json's appendString does with HTML
// escaping: '"', '\\' and control characters escaped, '<', '>' and '&' as
// \u003c..., invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and
// \u2029 (TestJSONString, FuzzJSONString).
func (w *jsonWriter) string(s string) {
	const hex = "0123456789abcdef"
	b := append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	w.b = append(b, '"')
}

// float writes a float64 as encoding/json does; NaN and infinities (which
// json.Marshal refuses) fail.
func (w *jsonWriter) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.failed = true
		return
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

// time writes t as its MarshalJSON does (RFC 3339 with nanoseconds); a
// time MarshalJSON refuses (a year outside 0-9999, a zone offset of 24
// hours or more) fails.
func (w *jsonWriter) time(t time.Time) {
	w.b = append(w.b, '"')
	n0 := len(w.b)
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	b := w.b
	switch {
	case len(b) < n0+5 || b[n0+4] != '-':
		w.failed = true
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		h := b[len(b)-len("07:00"):]
		if ('0' <= c && c <= '9') || 10*(h[0]-'0')+(h[1]-'0') >= 24 {
			w.failed = true
		}
	}
	w.b = append(w.b, '"')
}

// int64s writes a []int64 (null when nil).
func (w *jsonWriter) int64s(v []int64) { writeList(w, v, (*jsonWriter).int) }

// strings writes a []string (null when nil).
func (w *jsonWriter) strings(v []string) { writeList(w, v, (*jsonWriter).string) }

// writeList writes a JSON array of v's elements, each with elem (null
// when v is nil).
func writeList[T any](w *jsonWriter, v []T, elem func(*jsonWriter, T)) {
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, x := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		elem(w, x)
	}
	w.b = append(w.b, ']')
}

// stamped writes the members of a register's Stamp (the LWW's embedded
// struct: "r" when not 0, "t", "id") and the key of its value; the caller
// writes the value and closes the object.
func (w *jsonWriter) stamped(s Stamp) bool {
	outer := w.open()
	if s.Rank != 0 {
		w.key("r")
		w.int(int64(s.Rank))
	}
	w.key("t")
	w.time(s.Time)
	w.key("id")
	w.string(s.ID)
	w.key("v")
	return outer
}

// lwwString, lwwInt64, lwwBool, lwwStrings and lwwTime write a register
// member with omitzero: left out while no event wrote it.
func (w *jsonWriter) lwwString(name string, r LWW[string]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.string(r.V)
	w.close(outer)
}

func (w *jsonWriter) lwwInt64(name string, r LWW[int64]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.int(r.V)
	w.close(outer)
}

func (w *jsonWriter) lwwBool(name string, r LWW[bool]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.bool(r.V)
	w.close(outer)
}

func (w *jsonWriter) lwwStrings(name string, r LWW[[]string]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.strings(r.V)
	w.close(outer)
}

func (w *jsonWriter) lwwTime(name string, r LWW[time.Time]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.time(r.V)
	w.close(outer)
}

// timeOmitZero writes a time member with omitzero.
func (w *jsonWriter) timeOmitZero(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	w.key(name)
	w.time(t)
}

// intOmitEmpty writes an integer member with omitempty.
func (w *jsonWriter) intOmitEmpty(name string, v int64) {
	if v != 0 {
		w.key(name)
		w.int(v)
	}
}

// appendJSON writes the job's state as json.Marshal does (the field
// order and options of JobState's tags).
func (j *JobState) appendJSON(w *jsonWriter) {
	outer := w.open()
	w.key("installationId")
	w.int(j.InstallationID)
	w.intOmitEmpty("jobId", j.JobID)
	w.intOmitEmpty("runId", j.RunID)
	w.intOmitEmpty("runAttempt", j.RunAttempt)
	if len(j.OtherRunIDs) > 0 {
		w.key("otherRunIds")
		w.int64s(j.OtherRunIDs)
	}
	if len(j.OtherRunAttempts) > 0 {
		w.key("otherRunAttempts")
		w.int64s(j.OtherRunAttempts)
	}
	w.lwwString("orgName", j.OrgName)
	w.lwwString("repoFullName", j.RepoFullName)
	w.lwwBool("repoIsPrivate", j.RepoIsPrivate)
	w.lwwString("defaultBranch", j.DefaultBranch)
	w.lwwInt64("workflowId", j.WorkflowID)
	w.lwwString("workflowName", j.WorkflowName)
	w.lwwString("jobName", j.JobName)
	w.lwwString("headSha", j.HeadSHA)
	w.lwwString("headBranch", j.HeadBranch)
	w.lwwString("htmlUrl", j.HTMLURL)
	w.lwwStrings("labels", j.Labels)
	w.lwwInt64("deploymentId", j.DeploymentID)
	w.lwwInt64("runnerId", j.RunnerID)
	w.lwwString("runnerName", j.RunnerName)
	w.lwwInt64("runnerGroupId", j.RunnerGroupID)
	w.lwwString("status", j.Status)
	w.lwwString("conclusion", j.Conclusion)
	w.lwwTime("completedAt", j.CompletedAt)
	w.timeOmitZero("createdAt", j.CreatedAt)
	w.timeOmitZero("receivedAt", j.ReceivedAt)
	w.timeOmitZero("scheduledAt", j.ScheduledAt)
	w.timeOmitZero("startedAt", j.StartedAt)
	w.timeOmitZero("firstAt", j.FirstAt)
	w.timeOmitZero("updatedAt", j.UpdatedAt)
	w.timeOmitZero("createdFallback", j.CreatedFallback)
	w.lwwString("instanceId", j.InstanceID)
	w.lwwString("instanceType", j.InstanceType)
	w.lwwString("instanceLifecycle", j.InstanceLifecycle)
	w.lwwString("fleetId", j.FleetID)
	w.lwwString("poolName", j.PoolName)
	if j.WasInterrupted {
		w.key("wasInterrupted")
		w.bool(true)
	}
	if len(j.Usage) > 0 {
		w.key("usage")
		inner := w.open()
		keys := make([]string, 0, len(j.Usage))
		for k := range j.Usage {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			u := j.Usage[k]
			if w.comma {
				w.b = append(w.b, ',')
			}
			w.comma = true
			w.string(k)
			w.b = append(w.b, ':')
			o := w.stamped(u.Stamp)
			ou := w.open()
			if u.V.Seconds != nil {
				w.key("seconds")
				w.float(*u.V.Seconds)
			}
			if u.V.Dollars != nil {
				w.key("dollars")
				w.float(*u.V.Dollars)
			}
			w.close(ou)
			w.close(o)
		}
		w.close(inner)
	}
	w.close(outer)
}

// stringOmitEmpty writes a string member with omitempty.
func (w *jsonWriter) stringOmitEmpty(name, v string) {
	if v != "" {
		w.key(name)
		w.string(v)
	}
}

// raw writes a json.RawMessage as json.Marshal does when that is to copy
// it (compact JSON without characters it would escape: '<', '>', '&',
// U+2028, U+2029); anything else fails, for json.Marshal to compact it or
// refuse it.
func (w *jsonWriter) raw(v json.RawMessage) {
	if v == nil {
		w.b = append(w.b, "null"...)
		return
	}
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xE2: // 0xE2 starts U+2028 and U+2029
			w.failed = true
			return
		}
	}
	if !json.Valid(v) {
		w.failed = true
		return
	}
	w.b = append(w.b, v...)
}

func (w *jsonWriter) lwwRaw(name string, r LWW[json.RawMessage]) {
	if r.IsZero() {
		return
	}
	w.key(name)
	outer := w.stamped(r.Stamp)
	w.raw(r.V)
	w.close(outer)
}

// appendJSON writes the execution's state as json.Marshal does.
func (a *AgentExecutionState) appendJSON(w *jsonWriter) {
	outer := w.open()
	w.stringOmitEmpty("executionArn", a.ExecutionArn)
	w.stringOmitEmpty("stateMachineArn", a.StateMachineArn)
	w.stringOmitEmpty("name", a.Name)
	if a.Agent {
		w.key("agent")
		w.bool(true)
	}
	w.intOmitEmpty("startDate", a.StartDate)
	w.lwwString("status", a.Status)
	w.lwwInt64("stopDate", a.StopDate)
	w.lwwInt64("redriveDate", a.RedriveDate)
	w.lwwString("redriveStatus", a.RedriveStatus)
	w.intOmitEmpty("redriveCount", a.RedriveCount)
	w.timeOmitZero("indexedAt", a.IndexedAt)
	w.close(outer)
}

// appendJSON writes the message's state as json.Marshal does.
func (m *MessageState) appendJSON(w *jsonWriter) {
	outer := w.open()
	w.stringOmitEmpty("messageId", m.MessageID)
	w.stringOmitEmpty("stage", m.Stage)
	w.lwwString("status", m.Status)
	w.lwwString("createdBy", m.CreatedBy)
	w.lwwString("messageType", m.MessageType)
	w.lwwRaw("payload", m.Payload)
	w.lwwString("correlationId", m.CorrelationID)
	w.lwwString("errorMessage", m.ErrorMessage)
	w.lwwString("notificationId", m.NotificationID)
	if m.RetryCount != nil {
		w.key("retryCount")
		w.int(int64(*m.RetryCount))
	}
	w.timeOmitZero("createdAt", m.CreatedAt)
	w.timeOmitZero("processingStartedAt", m.ProcessingStartedAt)
	w.timeOmitZero("firstAt", m.FirstAt)
	w.timeOmitZero("updatedAt", m.UpdatedAt)
	w.close(outer)
}
