package archiver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// Table names: one Parquet table (and one Glue table) per source.
const (
	TableAgentExecutions = "agent_executions" // aws.states.execution_status_change
	TableAlbumWorkflow   = "album_workflow"   // album.*
	TableGitHubJobs      = "github_jobs"      // github.workflow_job.*, runson.runner.*, github.deployment.*
	TableMessages        = "messages"         // rez.message.*
)

// PartitionKey is the Hive partition column of every table: the event's own
// UTC date (YYYY-MM-DD). It is part of the object key, not of the file.
const PartitionKey = "event_date"

// Glue (Hive) column types used by the tables. Only types Athena reads from
// Parquet: signed 32/64-bit integers, doubles, booleans, UTF-8 strings and
// TIMESTAMP(MICROS, adjusted to UTC).
const (
	TypeString    = "string"
	TypeBigint    = "bigint"
	TypeInt       = "int"
	TypeDouble    = "double"
	TypeBoolean   = "boolean"
	TypeTimestamp = "timestamp"
)

// Column is one column of an archive table, as Glue declares it.
type Column struct {
	Name    string // snake_case, unique in its table
	Type    string // Glue/Hive type: string, bigint, int, double, boolean, timestamp
	Comment string
	// ID is the column's Iceberg field id, written into the Parquet schema
	// as its field_id. It is unique in its table and never changes: the
	// envelope columns have 1-12 in every table, a table's typed columns
	// FirstTypedID and up, in list order.
	ID int
	// Required means never null (the envelope columns except recorded_at,
	// spec_version and the *_raw columns); the others are optional.
	Required bool
}

// FirstTypedID is the field id of the first typed column of every table:
// the head columns have 1-6 and the tail columns 7-12.
const FirstTypedID = 13

// TableDef is one archive table: its name, what it holds and its columns in
// file order. The partition column (PartitionKey) is not among them.
type TableDef struct {
	Name, Doc string
	Columns   []Column
}

// source is what a column's value is computed from: the record, and its
// payload decoded with schema.Decode (nil when the data does not decode).
type source struct {
	rec     *Record
	payload schema.Payload
}

// colDef is a column with what the writer needs to know about it.
type colDef struct {
	Column
	dict    bool // low cardinality: dictionary-encoded
	noStats bool // long opaque text: no min/max page bounds
	get     func(s *source) any
}

// tableDef is a table with its column definitions.
type tableDef struct {
	name, doc string
	cols      []colDef
	index     map[string]int // column name -> position
}

// A column value is nil (null) or one of string, int64, int32, float64, bool
// and time.Time, matching the column type.

// Envelope columns, first and last in every table. data and the stream
// position make every row a complete copy of the stream record's event.
//
// Field ids are permanent (Iceberg finds a column by its id, and files
// already written carry them): headCols have ids 1-6 and tailCols 7-12, in
// list order, in every table. Never reorder, remove or renumber them, nor
// add envelope columns: a new column is a typed column, added at the end of
// its table's typed list. TestFieldIDsGolden (testdata/field_ids.golden.json)
// fails when an existing column's id changes.
var headCols = []colDef{
	{Column: Column{Name: "event_id", Type: TypeString, Comment: "event id (CloudEvents id); unique per subject", ID: 1, Required: true},
		get: func(s *source) any { return s.rec.Event.ID }},
	{Column: Column{Name: "event_type", Type: TypeString, Comment: "event type, e.g. github.workflow_job.completed", ID: 2, Required: true}, dict: true,
		get: func(s *source) any { return s.rec.Event.Type }},
	{Column: Column{Name: "subject", Type: TypeString, Comment: "the aggregate the event belongs to, e.g. github/<installation>/job/<job>", ID: 3, Required: true},
		get: func(s *source) any { return s.rec.Event.Subject }},
	{Column: Column{Name: "source", Type: TypeString, Comment: "producer (CloudEvents source)", ID: 4, Required: true}, dict: true,
		get: func(s *source) any { return s.rec.Event.Source }},
	{Column: Column{Name: "event_time", Type: TypeTimestamp, Comment: "when it happened, per the producer (UTC, microseconds); event_date is its date", ID: 5, Required: true},
		get: func(s *source) any { return s.rec.Event.Time }},
	{Column: Column{Name: "recorded_at", Type: TypeTimestamp, Comment: "when it was appended to the event table (UTC, microseconds)", ID: 6},
		get: func(s *source) any { return optTime(s.rec.Event.RecordedAt) }},
}

// tailCols: ids 7-12; see headCols.
var tailCols = []colDef{
	{Column: Column{Name: "data", Type: TypeString, Comment: "the raw event data JSON, byte for byte as stored in the event table", ID: 7, Required: true}, noStats: true,
		get: func(s *source) any { return string(s.rec.Event.Data) }},
	{Column: Column{Name: "stream_sequence", Type: TypeString, Comment: "DynamoDB stream SequenceNumber of the record", ID: 8, Required: true},
		get: func(s *source) any { return s.rec.Seq }},
	{Column: Column{Name: "stream_event_id", Type: TypeString, Comment: "DynamoDB stream record eventID", ID: 9, Required: true},
		get: func(s *source) any { return s.rec.StreamEventID }},
	{Column: Column{Name: "spec_version", Type: TypeString, Comment: "CloudEvents specversion", ID: 10}, dict: true,
		get: func(s *source) any { return optStr(s.rec.Event.SpecVersion) }},
	{Column: Column{Name: "event_time_raw", Type: TypeString, Comment: "event time as RFC 3339 with full precision; set only when event_time (microseconds, UTC) does not hold it exactly", ID: 11}, noStats: true,
		get: func(s *source) any { return rawTime(s.rec.Event.Time) }},
	{Column: Column{Name: "recorded_at_raw", Type: TypeString, Comment: "recorded_at as RFC 3339 with full precision; set only when recorded_at (microseconds, UTC) does not hold it exactly", ID: 12}, noStats: true,
		get: func(s *source) any { return rawTimePtr(s.rec.Event.RecordedAt) }},
}

// payloadCol builds a typed column read from a payload of type P; rows of
// other payload types (or undecodable data) get null.
func payloadCol[P schema.Payload](name, typ, comment string, dict bool, f func(P) any) colDef {
	return colDef{Column: Column{Name: name, Type: typ, Comment: comment}, dict: dict, get: func(s *source) any {
		if p, ok := s.payload.(P); ok {
			return f(p)
		}
		return nil
	}}
}

// anyCol builds a typed column computed from the whole source.
func anyCol(name, typ, comment string, dict bool, f func(*source) any) colDef {
	return colDef{Column: Column{Name: name, Type: typ, Comment: comment}, dict: dict, get: f}
}

type (
	sfnP     = *schema.ExecutionStatusChange
	albumExP = *schema.AlbumExecutionEvent
	albumP   = *schema.AlbumEvent
	taskP    = *schema.TaskEvent
	jobP     = *schema.WorkflowJobWebhook
	runnerP  = *schema.RunnerEvent
	deployP  = *schema.DeploymentEvent
	msgP     = *schema.MessageEvent
)

// The typed columns of each table, in file order. Their field ids are
// FirstTypedID (13) and up, in list order (newTableDef numbers them), and
// are permanent: add a new column only at the END of its list, and never
// remove or reorder one (a column no longer filled stays, always null).
// TestFieldIDsGolden fails when an existing column's id changes.

var agentExecutionCols = []colDef{
	payloadCol("execution_arn", TypeString, "Step Functions execution ARN", false, func(p sfnP) any { return optStr(p.ExecutionArn) }),
	payloadCol("state_machine_arn", TypeString, "state machine ARN", true, func(p sfnP) any { return optStr(p.StateMachineArn) }),
	payloadCol("execution_name", TypeString, "execution name", false, func(p sfnP) any { return optStr(p.Name) }),
	payloadCol("agent_name", TypeString, "agent name (state machine name without its stage suffix); null unless the state machine carries the agent tags", true,
		func(p sfnP) any {
			if !p.IsAgent() {
				return nil
			}
			return optStr(schema.AgentName(p.StateMachineArn))
		}),
	payloadCol("is_agent", TypeBoolean, "whether the state machine carries the tags Type=Agent and Application=StepFunctionsAgent", false,
		func(p sfnP) any { return p.IsAgent() }),
	payloadCol("status", TypeString, "RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED", true, func(p sfnP) any { return optStr(p.Status) }),
	payloadCol("start_date", TypeTimestamp, "execution start (UTC, microseconds)", false, func(p sfnP) any { return epochMillis(p.StartDate) }),
	payloadCol("stop_date", TypeTimestamp, "execution stop (UTC, microseconds); null while running", false, func(p sfnP) any {
		if p.StopDate == nil {
			return nil
		}
		return epochMillis(*p.StopDate)
	}),
	payloadCol("duration_ms", TypeBigint, "stop_date - start_date in ms; null while running", false, func(p sfnP) any {
		if p.StopDate == nil || p.StartDate <= 0 {
			return nil
		}
		return *p.StopDate - p.StartDate
	}),
	payloadCol("state_machine_tags", TypeString, "state machine tags as a JSON object", false, func(p sfnP) any {
		if p.StateMachineTags == nil {
			return nil
		}
		return jsonText(p.StateMachineTags)
	}),
}

var albumWorkflowCols = []colDef{
	anyCol("workflow_type", TypeString, "step-functions (sf) or durable-functions (ldf)", true, func(s *source) any {
		switch p := s.payload.(type) {
		case albumExP:
			return optStr(p.WorkflowType)
		case albumP:
			return optStr(p.WorkflowType)
		case taskP:
			return optStr(p.WorkflowType)
		}
		return nil
	}),
	anyCol("entity_type", TypeString, "execution, album or task", true, func(s *source) any {
		switch s.payload.(type) {
		case albumExP:
			return "execution"
		case albumP:
			return "album"
		case taskP:
			return "task"
		}
		return nil
	}),
	anyCol("execution_id", TypeString, "workflow execution id (UUID)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case albumExP:
			return optStr(p.ExecutionID)
		case albumP:
			return optStr(p.ExecutionID)
		case taskP:
			return optStr(p.ExecutionID)
		}
		return nil
	}),
	payloadCol("task_id", TypeString, "human validation task id", false, func(p taskP) any { return optStr(p.TaskID) }),
	payloadCol("album_index", TypeInt, "album position in the image (1-based)", false, func(p albumP) any { return int32(p.AlbumIndex) }),
	payloadCol("current_step", TypeString, "workflow step (step and waiting events)", true, func(p albumExP) any { return optStr(p.CurrentStep) }),
	anyCol("image_s3_key", TypeString, "uploaded image key", false, func(s *source) any {
		switch p := s.payload.(type) {
		case albumExP:
			return optStr(p.ImageS3Key)
		case taskP:
			return optStr(p.ImageS3Key)
		}
		return nil
	}),
	payloadCol("duration_ms", TypeBigint, "execution duration in ms (completed, failed)", false, func(p albumExP) any { return optI64(p.DurationMs) }),
	payloadCol("estimated_cost", TypeDouble, "estimated execution cost in USD (completed, failed)", false, func(p albumExP) any { return optF64(p.EstimatedCost) }),
	payloadCol("error", TypeString, "failure reason (failed)", false, func(p albumExP) any { return optStr(p.Error) }),
	payloadCol("album_name", TypeString, "album name", false, func(p albumP) any { return optStr(p.AlbumName) }),
	payloadCol("artist", TypeString, "artist", false, func(p albumP) any { return optStr(p.Artist) }),
	payloadCol("year", TypeInt, "release year (extracted, or validated)", false, func(p albumP) any { return optInt(p.Year) }),
	payloadCol("year_original", TypeInt, "year as extracted before validation", false, func(p albumP) any { return optInt(p.YearOriginal) }),
	payloadCol("year_validated", TypeBoolean, "whether validation confirmed the year", false, func(p albumP) any {
		if p.YearValidated == nil {
			return nil
		}
		return *p.YearValidated
	}),
	payloadCol("price_estimate", TypeDouble, "estimated price in USD (priced)", false, func(p albumP) any { return optF64(p.PriceEstimate) }),
	payloadCol("price_confidence", TypeDouble, "price confidence 0..1 (priced)", false, func(p albumP) any { return optF64(p.PriceConfidence) }),
	payloadCol("price_source", TypeString, "where the price came from", true, func(p albumP) any { return optStr(p.PriceSource) }),
	payloadCol("album_count", TypeInt, "albums listed by the task (created: albums; completed: validatedData)", false, func(p taskP) any {
		switch {
		case len(p.ValidatedData) > 0:
			return int32(len(p.ValidatedData))
		case len(p.Albums) > 0:
			return int32(len(p.Albums))
		}
		return nil
	}),
	payloadCol("expires_at", TypeTimestamp, "task expiry (UTC, microseconds)", false, func(p taskP) any { return optTime(p.ExpiresAt) }),
}

var githubJobCols = []colDef{
	anyCol("installation_id", TypeBigint, "GitHub App installation id (0: GHES without installation)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.InstallationID()
		case runnerP:
			return p.InstallationID
		case deployP:
			return p.InstallationID
		}
		return nil
	}),
	anyCol("job_id", TypeBigint, "workflow job id (scoped by installation)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.WorkflowJob.ID
		case runnerP:
			return p.JobID
		}
		return nil
	}),
	anyCol("run_id", TypeBigint, "workflow run id", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return p.WorkflowJob.RunID
		case runnerP:
			return optI64v(p.RunID)
		}
		return nil
	}),
	anyCol("run_attempt", TypeInt, "workflow run attempt (1+)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return int32(p.WorkflowJob.RunAttempt)
		case runnerP:
			if p.RunAttempt == 0 {
				return nil
			}
			return int32(p.RunAttempt)
		}
		return nil
	}),
	anyCol("repo_full_name", TypeString, "owner/name", true, func(s *source) any {
		switch p := s.payload.(type) {
		case jobP:
			return optStr(p.Repository.FullName)
		case runnerP:
			return optStr(p.RepoFullName)
		case deployP:
			return optStr(p.RepoFullName)
		}
		return nil
	}),
	payloadCol("workflow_name", TypeString, "workflow name", true, func(p jobP) any { return optStr(p.WorkflowJob.WorkflowName) }),
	payloadCol("job_name", TypeString, "job name", true, func(p jobP) any { return optStr(p.WorkflowJob.Name) }),
	payloadCol("head_branch", TypeString, "branch", true, func(p jobP) any { return optStr(p.WorkflowJob.HeadBranch) }),
	payloadCol("status", TypeString, "job status in the webhook: queued, waiting, in_progress, completed", true, func(p jobP) any { return optStr(p.WorkflowJob.Status) }),
	payloadCol("conclusion", TypeString, "success, failure, cancelled, skipped, ... (completed)", true, func(p jobP) any { return optStrPtr(p.WorkflowJob.Conclusion) }),
	payloadCol("labels", TypeString, "runs-on labels as a JSON array", true, func(p jobP) any {
		if p.WorkflowJob.Labels == nil {
			return nil
		}
		return jsonText(p.WorkflowJob.Labels)
	}),
	payloadCol("runner_name", TypeString, "runner name", false, func(p jobP) any { return optStrPtr(p.WorkflowJob.RunnerName) }),
	payloadCol("created_at", TypeTimestamp, "job created (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.CreatedAt) }),
	payloadCol("started_at", TypeTimestamp, "job started (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.StartedAt) }),
	payloadCol("completed_at", TypeTimestamp, "job completed (UTC, microseconds)", false, func(p jobP) any { return optTime(p.WorkflowJob.CompletedAt) }),
	payloadCol("queue_ms", TypeBigint, "started_at - created_at in ms (in_progress, completed)", false, func(p jobP) any {
		j := p.WorkflowJob
		if p.Action == "queued" || p.Action == "waiting" {
			return nil // a queued body's started_at is its created_at
		}
		return diffMillis(j.CreatedAt, j.StartedAt)
	}),
	payloadCol("duration_ms", TypeBigint, "completed_at - started_at in ms (completed)", false, func(p jobP) any {
		return diffMillis(p.WorkflowJob.StartedAt, p.WorkflowJob.CompletedAt)
	}),
	payloadCol("instance_id", TypeString, "EC2 instance id (runner events)", false, func(p runnerP) any { return optStr(p.InstanceID) }),
	payloadCol("instance_type", TypeString, "EC2 instance type (runner events)", true, func(p runnerP) any { return optStr(p.InstanceType) }),
	payloadCol("instance_lifecycle", TypeString, "on-demand or spot (runner events)", true, func(p runnerP) any { return optStr(p.InstanceLifecycle) }),
	payloadCol("pool_name", TypeString, "RunsOn pool (runner events)", true, func(p runnerP) any { return optStr(p.PoolName) }),
	payloadCol("region", TypeString, "AWS region (runner events)", true, func(p runnerP) any { return optStr(p.Region) }),
	payloadCol("scheduled_at", TypeTimestamp, "runner scheduled (UTC, microseconds)", false, func(p runnerP) any { return optTime(p.ScheduledAt) }),
	payloadCol("reason", TypeString, "reschedule or interruption reason", true, func(p runnerP) any { return optStr(p.Reason) }),
	payloadCol("usage_seconds", TypeDouble, "instance usage in seconds (interrupted, terminated)", false, func(p runnerP) any { return optF64(p.UsageInSeconds) }),
	payloadCol("usage_dollars", TypeDouble, "instance cost in USD (interrupted, terminated)", false, func(p runnerP) any { return optF64(p.UsageInDollars) }),
	anyCol("deployment_id", TypeBigint, "deployment id (deployment events, and jobs of a protected environment)", false, func(s *source) any {
		switch p := s.payload.(type) {
		case deployP:
			return p.DeploymentID
		case jobP:
			if p.Deployment != nil {
				return p.Deployment.ID
			}
		}
		return nil
	}),
	payloadCol("environment", TypeString, "deployment environment", true, func(p deployP) any { return optStr(p.Environment) }),
	payloadCol("requires_approval", TypeBoolean, "whether the deployment waits for approval", false, func(p deployP) any { return p.RequiresApproval }),
}

var messageCols = []colDef{
	payloadCol("message_id", TypeString, "message id (UUID)", false, func(p msgP) any { return optStr(p.MessageID) }),
	payloadCol("stage", TypeString, "dev, stage or prod", true, func(p msgP) any { return optStr(p.Stage) }),
	payloadCol("message_type", TypeString, "message type (created)", true, func(p msgP) any { return optStr(p.MessageType) }),
	anyCol("status", TypeString, "status the event moves the message to: created, queued, processing, completed, failed", true, func(s *source) any {
		if !strings.HasPrefix(s.rec.Event.Type, "rez.message.") {
			return nil
		}
		return schema.MessageStatus(s.rec.Event.Type)
	}),
	payloadCol("created_by", TypeString, "creator (created)", true, func(p msgP) any { return optStr(p.CreatedBy) }),
	payloadCol("correlation_id", TypeString, "tracing correlation id (created)", false, func(p msgP) any { return optStr(p.CorrelationID) }),
	payloadCol("retry_count", TypeInt, "retry count (processing)", false, func(p msgP) any { return optInt(p.RetryCount) }),
	payloadCol("error_message", TypeString, "failure reason (failed)", false, func(p msgP) any { return optStr(p.ErrorMessage) }),
	payloadCol("notification_id", TypeString, "ntfy notification id (completed)", false, func(p msgP) any { return optStr(p.NotificationID) }),
}

// tableDefs is the archive's schema, in the order of Tables().
var tableDefs = []*tableDef{
	newTableDef(TableAgentExecutions, "Step Functions agent execution status changes (aws.states.execution_status_change), one row per event; non-agent state machines have is_agent = false.", agentExecutionCols),
	newTableDef(TableAlbumWorkflow, "sf/ldf album workflow events (album.*): executions, albums and human validation tasks, one row per event.", albumWorkflowCols),
	newTableDef(TableGitHubJobs, "GitHub workflow_job webhooks (github.workflow_job.*), RunsOn runner events (runson.runner.*) and deployment approvals (github.deployment.*), one row per event.", githubJobCols),
	newTableDef(TableMessages, "rez_agent message transitions (rez.message.*), one row per event.", messageCols),
}

var tableByName = func() map[string]*tableDef {
	m := map[string]*tableDef{}
	for _, t := range tableDefs {
		m[t.name] = t
	}
	return m
}()

// newTableDef lays out a table: headCols, typed, tailCols. The typed
// columns get the field ids FirstTypedID and up, in list order.
func newTableDef(name, doc string, typed []colDef) *tableDef {
	cols := make([]colDef, 0, len(headCols)+len(typed)+len(tailCols))
	cols = append(append(append(cols, headCols...), typed...), tailCols...)
	for i := range typed {
		cols[len(headCols)+i].ID = FirstTypedID + i
	}
	t := &tableDef{name: name, doc: doc, cols: cols, index: map[string]int{}}
	ids := map[int]bool{}
	for i, c := range cols {
		if _, dup := t.index[c.Name]; dup {
			panic("archiver: duplicate column " + name + "." + c.Name)
		}
		if c.ID <= 0 || ids[c.ID] {
			panic("archiver: column " + name + "." + c.Name + ": missing or duplicate field id")
		}
		t.index[c.Name] = i
		ids[c.ID] = true
	}
	return t
}

// Tables returns the archive's table definitions (the Glue schema), in a
// stable order. The Parquet schema of each table is built from the same
// definitions, column for column, with each column's ID as its field_id
// and Required as its repetition (the Iceberg schema is built from them too).
func Tables() []TableDef {
	out := make([]TableDef, len(tableDefs))
	for i, t := range tableDefs {
		cols := make([]Column, len(t.cols))
		for j, c := range t.cols {
			cols[j] = c.Column
		}
		out[i] = TableDef{Name: t.name, Doc: t.doc, Columns: cols}
	}
	return out
}

// TableDefOf returns the definition of the named table, as Tables lists
// it, and false for a table the archive does not have.
func TableDefOf(name string) (TableDef, bool) {
	for _, t := range Tables() {
		if t.Name == name {
			return t, true
		}
	}
	return TableDef{}, false
}

// TableFor returns the archive table that holds events of eventType, and
// false for a type it does not know.
func TableFor(eventType string) (string, bool) {
	k, ok := schema.KindOf(eventType)
	if !ok {
		return "", false
	}
	switch k.Domain {
	case schema.DomainStates:
		return TableAgentExecutions, true
	case schema.DomainAlbums:
		return TableAlbumWorkflow, true
	case schema.DomainGitHub:
		return TableGitHubJobs, true
	case schema.DomainMessages:
		return TableMessages, true
	}
	return "", false
}

// row computes the column values of one record, in column order.
func (t *tableDef) row(rec *Record, dst []any) []any {
	s := source{rec: rec, payload: rec.payload}
	if s.payload == nil {
		if p, err := schema.Decode(rec.Event); err == nil {
			s.payload = p
		}
	}
	dst = dst[:0]
	for i := range t.cols {
		dst = append(dst, t.cols[i].get(&s))
	}
	return dst
}

func optStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optStrPtr(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}

func optI64(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

func optI64v(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

func optF64(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func optInt(v *int) any {
	if v == nil {
		return nil
	}
	return int32(*v)
}

func optTime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return *t
}

func epochMillis(ms int64) any {
	if ms <= 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC()
}

func diffMillis(from, to *time.Time) any {
	if from == nil || to == nil || from.IsZero() || to.IsZero() {
		return nil
	}
	return to.Sub(*from).Milliseconds()
}

func jsonText(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return string(b)
}

// exactMicros reports whether t is exactly representable as a TIMESTAMP
// (MICROS) in UTC: no sub-microsecond part and the UTC location.
func exactMicros(t time.Time) bool {
	return t.Location() == time.UTC && t.Nanosecond()%int(time.Microsecond) == 0
}

// rawTime is the *_raw column of a time: RFC 3339 with full precision, or
// null when the TIMESTAMP(MICROS) column holds t exactly.
func rawTime(t time.Time) any {
	if exactMicros(t) {
		return nil
	}
	return t.Format(time.RFC3339Nano)
}

func rawTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return rawTime(*t)
}
