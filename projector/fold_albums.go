package projector

import (
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/schema"
)

func init() {
	registerFold(KindAlbumExecution, func() Aggregate { return &AlbumExecutionState{} })
	registerFold(KindTask, func() Aggregate { return &TaskState{} })
	registerDeriver(schema.TableWorkflows, deriveMetricsRow)
}

// deriveMetricsRow computes seed 001's averages on a daily metrics row
// (avgDurationMs = durationSumMs / durationCount, avgCostPerExecution =
// totalCost / executionCount); other workflows items derive nothing.
func deriveMetricsRow(row map[string]types.AttributeValue) map[string]types.AttributeValue {
	if s, ok := row["entityType"].(*types.AttributeValueMemberS); !ok || s.Value != schema.EntityMetrics {
		return nil
	}
	return map[string]types.AttributeValue{
		"avgDurationMs":       ratQuo(ratAttr(row, "durationSumMs"), ratAttr(row, "durationCount"), 0),
		"avgCostPerExecution": ratQuo(ratAttr(row, "totalCost"), ratAttr(row, "executionCount"), 6),
	}
}

// Album workflow statuses (seed 001, declared in schema): running and
// waiting alternate with one rank, completed and failed absorb them.
var albumExecutionStatuses = precedenceOf(KindAlbumExecution)

// Task statuses: pending, then completed or expired.
var taskStatuses = precedenceOf(KindTask)

// AlbumExecutionState is the fold of one sf/ldf album-workflow execution and
// its albums (albums/execution/<id>): the execution item, one item per
// album, and the execution's share of its day's metrics row (seed 001).
type AlbumExecutionState struct {
	WorkflowType string      `json:"workflowType,omitempty"`
	ExecutionID  string      `json:"executionId,omitempty"`
	ImageS3Key   LWW[string] `json:"imageS3Key,omitzero"`
	Status       LWW[string] `json:"status,omitzero"`
	CurrentStep  LWW[string] `json:"currentStep,omitzero"`
	// Outcome is written by terminal events with the status's stamp, so it
	// belongs to the terminal event whose status won.
	Outcome LWW[AlbumOutcome] `json:"outcome,omitzero"`
	// StartedAt is the earliest started event's time, FirstAt the earliest
	// time of any event, UpdatedAt the latest recordedat.
	StartedAt time.Time           `json:"startedAt,omitzero"`
	FirstAt   time.Time           `json:"firstAt,omitzero"`
	UpdatedAt time.Time           `json:"updatedAt,omitzero"`
	Albums    map[int]*AlbumState `json:"albums,omitempty"`
}

// AlbumOutcome is what a completed or failed event reports.
type AlbumOutcome struct {
	DurationMs    *int64   `json:"durationMs,omitempty"`
	EstimatedCost *float64 `json:"estimatedCost,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// AlbumState is one album of an execution. Year is written with rank 1 by
// album.validated, so a validated year beats the extracted one whatever the
// clocks say.
type AlbumState struct {
	AlbumName       LWW[string]             `json:"albumName,omitzero"`
	Artist          LWW[string]             `json:"artist,omitzero"`
	Year            LWW[int64]              `json:"year,omitzero"`
	YearValidated   LWW[bool]               `json:"yearValidated,omitzero"`
	YearOriginal    LWW[int64]              `json:"yearOriginal,omitzero"`
	PriceEstimate   LWW[float64]            `json:"priceEstimate,omitzero"`
	PriceConfidence LWW[float64]            `json:"priceConfidence,omitzero"`
	PriceSource     LWW[string]             `json:"priceSource,omitzero"`
	ImageRegion     LWW[schema.ImageRegion] `json:"imageRegion,omitzero"`
	CreatedAt       time.Time               `json:"createdAt,omitzero"`
	UpdatedAt       time.Time               `json:"updatedAt,omitzero"`
}

// Apply folds album.execution.* and album.{extracted,validated,priced} events.
func (a *AlbumExecutionState) Apply(e schema.Event, p schema.Payload) {
	s := StampOf(e)
	switch d := payloadOf(e, p).(type) {
	case *schema.AlbumExecutionEvent:
		keepLeast(&a.WorkflowType, d.WorkflowType)
		keepLeast(&a.ExecutionID, d.ExecutionID)
		if d.ImageS3Key != "" {
			a.ImageS3Key.Set(s, d.ImageS3Key)
		}
		if d.CurrentStep != "" {
			a.CurrentStep.Set(s, d.CurrentStep)
		}
		if e.Type == schema.TypeAlbumExecutionStarted {
			keepEarliest(&a.StartedAt, e.Time)
		}
		if rs, ok := albumExecutionStatuses.Offer(&a.Status, statusOf(e), s); ok && rs.Rank > 0 {
			a.Outcome.Set(rs, AlbumOutcome{DurationMs: d.DurationMs, EstimatedCost: d.EstimatedCost, Error: d.Error})
		}
	case *schema.AlbumEvent:
		keepLeast(&a.WorkflowType, d.WorkflowType)
		keepLeast(&a.ExecutionID, d.ExecutionID)
		if a.Albums == nil {
			a.Albums = map[int]*AlbumState{}
		}
		al := a.Albums[d.AlbumIndex]
		if al == nil {
			al = &AlbumState{}
			a.Albums[d.AlbumIndex] = al
		}
		al.apply(e, d, s)
	default:
		return
	}
	keepEarliest(&a.FirstAt, e.Time)
	keepLatest(&a.UpdatedAt, recordedTime(e))
}

func (al *AlbumState) apply(e schema.Event, d *schema.AlbumEvent, s Stamp) {
	if d.AlbumName != "" {
		al.AlbumName.Set(s, d.AlbumName)
	}
	if d.Artist != "" {
		al.Artist.Set(s, d.Artist)
	}
	if d.Year != nil {
		ys := s
		if e.Type == schema.TypeAlbumValidated {
			ys = s.Ranked(1)
		}
		al.Year.Set(ys, int64(*d.Year))
	}
	if d.YearValidated != nil {
		al.YearValidated.Set(s, *d.YearValidated)
	}
	if d.YearOriginal != nil {
		al.YearOriginal.Set(s, int64(*d.YearOriginal))
	}
	if d.PriceEstimate != nil {
		al.PriceEstimate.Set(s, *d.PriceEstimate)
	}
	if d.PriceConfidence != nil {
		al.PriceConfidence.Set(s, *d.PriceConfidence)
	}
	if d.PriceSource != "" {
		al.PriceSource.Set(s, d.PriceSource)
	}
	if d.ImageRegion != nil {
		al.ImageRegion.Set(s, *d.ImageRegion)
	}
	keepEarliest(&al.CreatedAt, e.Time)
	keepLatest(&al.UpdatedAt, recordedTime(e))
}

// terminal reports whether the execution has completed or failed.
func (a *AlbumExecutionState) terminal() bool { return a.Status.Known() && a.Status.Rank > 0 }

// createdAt is when the execution started: its started event's time; if
// that is missing, its completion time minus durationMs; else its first
// event's time. It dates the execution item and its metrics row.
func (a *AlbumExecutionState) createdAt() time.Time {
	if !a.StartedAt.IsZero() {
		return a.StartedAt
	}
	if a.terminal() && a.Outcome.V.DurationMs != nil {
		return a.Status.Time.Add(-time.Duration(*a.Outcome.V.DurationMs) * time.Millisecond)
	}
	return a.FirstAt
}

// Items returns the execution item (sk "metadata") and one item per album
// (sk "album-<index>"), in album order.
func (a *AlbumExecutionState) Items() []Item {
	if a.ExecutionID == "" {
		return nil
	}
	it := schema.WorkflowExecutionItem{
		PK:           a.ExecutionID,
		SK:           "metadata",
		EntityType:   schema.EntityExecution,
		WorkflowType: a.WorkflowType,
		ExecutionID:  a.ExecutionID,
		ImageS3Key:   lwwStr(a.ImageS3Key),
		Status:       lwwStr(a.Status),
		CurrentStep:  lwwStr(a.CurrentStep),
		StartTime:    timeAttr(a.StartedAt),
		CreatedAt:    timeAttr(a.createdAt()),
		UpdatedAt:    timeAttr(a.UpdatedAt),
	}
	if a.terminal() {
		o := a.Outcome.V
		it.EndTime = timeAttr(a.Status.Time)
		it.DurationMs = o.DurationMs
		it.EstimatedCost = o.EstimatedCost
		it.Error = o.Error
	}
	items := []Item{itemOf(schema.TableWorkflows, it)}

	indexes := make([]int, 0, len(a.Albums))
	for i := range a.Albums {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		al := a.Albums[i]
		ai := schema.AlbumItem{
			PK:              a.ExecutionID,
			SK:              "album-" + strconv.Itoa(i),
			EntityType:      schema.EntityAlbum,
			AlbumIndex:      int64(i),
			SortValue:       int64(i),
			WorkflowType:    a.WorkflowType,
			ExecutionID:     a.ExecutionID,
			AlbumName:       lwwStr(al.AlbumName),
			Artist:          lwwStr(al.Artist),
			Year:            lwwPtr(al.Year),
			YearValidated:   lwwPtr(al.YearValidated),
			YearOriginal:    lwwPtr(al.YearOriginal),
			PriceEstimate:   lwwPtr(al.PriceEstimate),
			PriceConfidence: lwwPtr(al.PriceConfidence),
			PriceSource:     lwwStr(al.PriceSource),
			CreatedAt:       timeAttr(al.CreatedAt),
			UpdatedAt:       timeAttr(al.UpdatedAt),
		}
		if r := al.ImageRegion; r.Known() {
			ai.ImageRegion = &schema.RegionValue{X: int64(r.V.X), Y: int64(r.V.Y), Width: int64(r.V.Width), Height: int64(r.V.Height)}
		}
		items = append(items, itemOf(schema.TableWorkflows, ai))
	}
	return items
}

// Contributions returns the execution's share of the daily metrics row of
// its workflow type (seed 001 "Metrics Entity"): pk is the date of the
// execution's start (else its completion time minus durationMs, else its
// first event's time), sk "metrics-<workflowType>".
//
// The row holds sums only: executionCount, successCount, failureCount,
// durationSumMs and durationCount (terminal executions that report
// durationMs), and totalCost in nano-dollars (Scale 9: the payload allows at
// most 9 decimal places, so the sum equals the items' estimatedCost exactly). The seed's averages
// are derived on read: avgDurationMs = durationSumMs / durationCount,
// avgCostPerExecution = totalCost / executionCount. Sums, unlike averages,
// can be maintained by ADD deltas.
func (a *AlbumExecutionState) Contributions() []Contribution {
	if a.WorkflowType == "" || a.FirstAt.IsZero() {
		return nil
	}
	var o AlbumOutcome
	if a.terminal() {
		o = a.Outcome.V
	}
	date := dayOf(a.createdAt())
	c := map[string]int64{
		"executionCount": 1,
		"successCount":   0,
		"failureCount":   0,
		"durationSumMs":  0,
		"durationCount":  0,
		"totalCost":      0,
	}
	if a.terminal() {
		if a.Status.V == "completed" {
			c["successCount"] = 1
		} else {
			c["failureCount"] = 1
		}
		if o.DurationMs != nil {
			c["durationSumMs"], c["durationCount"] = *o.DurationMs, 1
		}
		if o.EstimatedCost != nil {
			c["totalCost"] = Nanos(*o.EstimatedCost)
		}
	}
	return []Contribution{{
		Table: schema.TableWorkflows,
		Key:   map[string]types.AttributeValue{"pk": avS(date), "sk": avS("metrics-" + a.WorkflowType)},
		Attrs: map[string]types.AttributeValue{
			"entityType":   avS(schema.EntityMetrics),
			"workflowType": avS(a.WorkflowType),
			"date":         avS(date),
			"period":       avS("daily"),
			"status":       avS("daily"), // GSI1's first sort attribute (docs/decisions.md)
			"createdAt":    avS(date + "T00:00:00.000Z"),
		},
		Counters: c,
		Scale:    map[string]int{"totalCost": 9},
	}}
}

// TaskState is the fold of one human validation task (albums/task/<id>).
type TaskState struct {
	TaskID        string                  `json:"taskId,omitempty"`
	WorkflowType  string                  `json:"workflowType,omitempty"`
	ExecutionID   string                  `json:"executionId,omitempty"`
	Status        LWW[string]             `json:"status,omitzero"`
	ImageS3Key    LWW[string]             `json:"imageS3Key,omitzero"`
	Albums        LWW[[]schema.TaskAlbum] `json:"albums,omitzero"`
	ValidatedData LWW[[]schema.TaskAlbum] `json:"validatedData,omitzero"`
	TaskToken     LWW[string]             `json:"taskToken,omitzero"`
	ExpiresAt     LWW[time.Time]          `json:"expiresAt,omitzero"`
	// CreatedAt and CompletedAt are the earliest created and completed
	// events' times; FirstAt the earliest event's; UpdatedAt the latest
	// recordedat.
	CreatedAt   time.Time `json:"createdAt,omitzero"`
	CompletedAt time.Time `json:"completedAt,omitzero"`
	FirstAt     time.Time `json:"firstAt,omitzero"`
	UpdatedAt   time.Time `json:"updatedAt,omitzero"`
}

// Apply folds album.task.* events.
func (t *TaskState) Apply(e schema.Event, p schema.Payload) {
	d, ok := payloadOf(e, p).(*schema.TaskEvent)
	if !ok {
		return
	}
	s := StampOf(e)
	keepLeast(&t.TaskID, d.TaskID)
	keepLeast(&t.WorkflowType, d.WorkflowType)
	keepLeast(&t.ExecutionID, d.ExecutionID)
	taskStatuses.Offer(&t.Status, statusOf(e), s)
	if d.ImageS3Key != "" {
		t.ImageS3Key.Set(s, d.ImageS3Key)
	}
	if len(d.Albums) > 0 {
		t.Albums.Set(s, d.Albums)
	}
	if len(d.ValidatedData) > 0 {
		t.ValidatedData.Set(s, d.ValidatedData)
	}
	if d.TaskToken != "" {
		t.TaskToken.Set(s, d.TaskToken)
	}
	if d.ExpiresAt != nil {
		t.ExpiresAt.Set(s, d.ExpiresAt.UTC())
	}
	switch e.Type {
	case schema.TypeTaskCreated:
		keepEarliest(&t.CreatedAt, e.Time)
	case schema.TypeTaskCompleted:
		keepEarliest(&t.CompletedAt, e.Time)
	}
	keepEarliest(&t.FirstAt, e.Time)
	keepLatest(&t.UpdatedAt, recordedTime(e))
}

// Items returns the task item (pk taskId, sk "metadata"). createdAt (GSI1's
// second sort attribute) is the created event's time, or the first event's
// until it is known; sortValue is createdAt in epoch milliseconds.
func (t *TaskState) Items() []Item {
	if t.TaskID == "" {
		return nil
	}
	created := t.CreatedAt
	if created.IsZero() {
		created = t.FirstAt
	}
	it := schema.TaskItem{
		PK:           t.TaskID,
		SK:           "metadata",
		EntityType:   schema.EntityTask,
		SortValue:    created.UnixMilli(),
		Status:       lwwStr(t.Status),
		TaskID:       t.TaskID,
		ExecutionID:  t.ExecutionID,
		WorkflowType: t.WorkflowType,
		ImageS3Key:   lwwStr(t.ImageS3Key),
		TaskToken:    lwwStr(t.TaskToken),
		CreatedAt:    timeAttr(created),
		CompletedAt:  timeAttr(t.CompletedAt),
		UpdatedAt:    timeAttr(t.UpdatedAt),
	}
	if t.Albums.Known() {
		it.Albums = taskAlbums(t.Albums.V)
	}
	if t.ValidatedData.Known() {
		it.ValidatedData = taskAlbums(t.ValidatedData.V)
	}
	if t.ExpiresAt.Known() {
		it.ExpiresAt = timeAttr(t.ExpiresAt.V)
	}
	return []Item{itemOf(schema.TableWorkflows, it)}
}

// Contributions: tasks feed no counter rows.
func (t *TaskState) Contributions() []Contribution { return nil }

// taskAlbums are a task's albums as its item holds them.
func taskAlbums(albums []schema.TaskAlbum) []schema.TaskAlbumValue {
	out := make([]schema.TaskAlbumValue, len(albums))
	for i, a := range albums {
		out[i] = schema.TaskAlbumValue{AlbumIndex: int64(a.AlbumIndex), AlbumName: a.AlbumName, Artist: a.Artist, Year: int64(a.Year)}
	}
	return out
}
