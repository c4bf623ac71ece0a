package schema

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Album workflow event types (seed 001). The same workflow runs as Step
// Functions (workflowType "step-functions", sf) and as Lambda Durable
// Functions ("durable-functions", ldf).
const (
	TypeAlbumExecutionStarted   = "album.execution.started"
	TypeAlbumExecutionStep      = "album.execution.step"
	TypeAlbumExecutionWaiting   = "album.execution.waiting"
	TypeAlbumExecutionCompleted = "album.execution.completed"
	TypeAlbumExecutionFailed    = "album.execution.failed"

	TypeAlbumExtracted = "album.extracted"
	TypeAlbumValidated = "album.validated"
	TypeAlbumPriced    = "album.priced"

	TypeTaskCreated   = "album.task.created"
	TypeTaskCompleted = "album.task.completed"
	TypeTaskExpired   = "album.task.expired"
)

// Workflow types of seed 001.
const (
	WorkflowStepFunctions    = "step-functions"
	WorkflowDurableFunctions = "durable-functions"
)

// The kinds of subject of the albums domain's events.
const (
	AggregateAlbumExecution = "album-execution" // an execution and its albums: albums/execution/<executionId>
	AggregateTask           = "album-task"      // a human validation task: albums/task/<taskId>
)

func init() {
	execution := func() Payload { return new(AlbumExecutionEvent) }
	album := func() Payload { return new(AlbumEvent) }
	task := func() Payload { return new(TaskEvent) }
	registerDomain(Descriptor{
		Domain: DomainAlbums,
		Doc:    "sf/ldf album workflow: executions, albums and human validation tasks (seed 001)",
		Aggregates: []Aggregate{
			{
				Kind: AggregateAlbumExecution, Subject: "albums/execution/<executionId>",
				// running and waiting alternate (a validation task makes an
				// execution wait, its completion makes it run again), so they
				// share a rank and the later by (time, id) wins; completed and
				// failed absorb them, and of both the later wins.
				Lifecycle: Lifecycle{{"running", 0}, {"waiting", 0}, {"completed", 1}, {"failed", 1}},
			},
			{
				Kind: AggregateTask, Subject: "albums/task/<taskId>",
				Lifecycle: Lifecycle{{"pending", 0}, {"completed", 1}, {"expired", 1}},
			},
		},
		Types: slices.Concat(
			eventTypes(AggregateAlbumExecution, execution,
				TypeAlbumExecutionStarted, "running",
				TypeAlbumExecutionStep, "running",
				TypeAlbumExecutionWaiting, "waiting",
				TypeAlbumExecutionCompleted, "completed",
				TypeAlbumExecutionFailed, "failed"),
			eventTypes(AggregateAlbumExecution, album,
				TypeAlbumExtracted, "",
				TypeAlbumValidated, "",
				TypeAlbumPriced, ""),
			eventTypes(AggregateTask, task,
				TypeTaskCreated, "pending",
				TypeTaskCompleted, "completed",
				TypeTaskExpired, "expired"),
		),
		Tables: []string{TableWorkflows},
	})
}

// AlbumExecutionEvent is a lifecycle event of one album-workflow execution.
// started carries imageS3Key; step and waiting carry currentStep; completed
// carries durationMs and estimatedCost (USD); failed carries error and may
// carry durationMs and estimatedCost.
type AlbumExecutionEvent struct {
	WorkflowType  string   `json:"workflowType"`
	ExecutionID   string   `json:"executionId"`
	ImageS3Key    string   `json:"imageS3Key,omitempty"`
	CurrentStep   string   `json:"currentStep,omitempty"`
	DurationMs    *int64   `json:"durationMs,omitempty"`
	EstimatedCost *float64 `json:"estimatedCost,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// Subject is "albums/execution/<executionId>".
func (p *AlbumExecutionEvent) Subject() string { return "albums/execution/" + p.ExecutionID }

func validateWorkflowAndExecution(c *checker, workflowType, executionID string) {
	c.oneOf("workflowType", workflowType, WorkflowStepFunctions, WorkflowDurableFunctions)
	if c.required("executionId", executionID) && !IsUUID(executionID) {
		c.fail("executionId", "must be a UUID")
	}
}

func (p *AlbumExecutionEvent) validate(c *checker, t string) {
	validateWorkflowAndExecution(c, p.WorkflowType, p.ExecutionID)
	switch t {
	case TypeAlbumExecutionStarted:
		if c.required("imageS3Key", p.ImageS3Key) {
			c.maxLen("imageS3Key", p.ImageS3Key, 1024)
		}
	case TypeAlbumExecutionStep, TypeAlbumExecutionWaiting:
		c.required("currentStep", p.CurrentStep)
	case TypeAlbumExecutionCompleted:
		if p.DurationMs == nil {
			c.fail("durationMs", "is required when the execution completes")
		}
		if p.EstimatedCost == nil {
			c.fail("estimatedCost", "is required when the execution completes")
		}
	case TypeAlbumExecutionFailed:
		c.required("error", p.Error)
	}
	// Bounds that keep the daily sums exact and far from overflowing:
	// durations within a year, costs within 1000 USD in nano-dollars.
	if p.DurationMs != nil && (*p.DurationMs < 0 || *p.DurationMs > MaxDurationMs) {
		c.fail("durationMs", "must be between 0 and 31622400000 (366 days)")
	}
	if p.EstimatedCost != nil {
		switch v := *p.EstimatedCost; {
		case v < 0 || v > 1000:
			c.fail("estimatedCost", "must be between 0 and 1000 (USD)")
		case CostDecimals(v) > MaxCostDecimals:
			c.fail("estimatedCost", "must have at most 9 decimal places (nano-dollars)")
		}
	}
}

// ImageRegion is where an album was found in the uploaded image, in pixels.
type ImageRegion struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// AlbumEvent is an album found in an execution's image. extracted carries
// albumName, artist and year (seed 001's AlbumSchema); validated carries the
// (possibly corrected) year, yearValidated and yearOriginal; priced carries
// priceEstimate (> 0), priceConfidence (0..1) and priceSource.
type AlbumEvent struct {
	WorkflowType    string       `json:"workflowType"`
	ExecutionID     string       `json:"executionId"`
	AlbumIndex      int          `json:"albumIndex"`
	AlbumName       string       `json:"albumName,omitempty"`
	Artist          string       `json:"artist,omitempty"`
	Year            *int         `json:"year,omitempty"`
	YearValidated   *bool        `json:"yearValidated,omitempty"`
	YearOriginal    *int         `json:"yearOriginal,omitempty"`
	PriceEstimate   *float64     `json:"priceEstimate,omitempty"`
	PriceConfidence *float64     `json:"priceConfidence,omitempty"`
	PriceSource     string       `json:"priceSource,omitempty"`
	ImageRegion     *ImageRegion `json:"imageRegion,omitempty"`
}

// Subject is the execution's subject: an album is part of its execution.
func (p *AlbumEvent) Subject() string { return "albums/execution/" + p.ExecutionID }

// AlbumKey is the album's sort key in the workflows table ("album-<index>").
func (p *AlbumEvent) AlbumKey() string { return "album-" + strconv.Itoa(p.AlbumIndex) }

func (p *AlbumEvent) validate(c *checker, t string) {
	validateWorkflowAndExecution(c, p.WorkflowType, p.ExecutionID)
	if p.AlbumIndex < 1 || p.AlbumIndex > MaxAlbums {
		c.fail("albumIndex", "must be between 1 and "+strconv.Itoa(MaxAlbums))
	}
	checkYear := func(field string, y *int, required bool) {
		switch {
		case y == nil && required:
			c.fail(field, "is required")
		case y != nil && (*y < 1900 || *y > 2100):
			c.fail(field, "must be between 1900 and 2100")
		}
	}
	switch t {
	case TypeAlbumExtracted:
		if c.required("albumName", p.AlbumName) {
			c.maxLen("albumName", p.AlbumName, 200)
		}
		if c.required("artist", p.Artist) {
			c.maxLen("artist", p.Artist, 200)
		}
		checkYear("year", p.Year, true)
	case TypeAlbumValidated:
		checkYear("year", p.Year, true)
		if p.YearValidated == nil {
			c.fail("yearValidated", "is required")
		}
		checkYear("yearOriginal", p.YearOriginal, false)
	case TypeAlbumPriced:
		if p.PriceEstimate == nil {
			c.fail("priceEstimate", "is required")
		} else if *p.PriceEstimate <= 0 {
			c.fail("priceEstimate", "must be positive")
		}
		if p.PriceConfidence == nil {
			c.fail("priceConfidence", "is required")
		} else if *p.PriceConfidence < 0 || *p.PriceConfidence > 1 {
			c.fail("priceConfidence", "must be between 0 and 1")
		}
		c.required("priceSource", p.PriceSource)
	}
	if p.AlbumName != "" && t != TypeAlbumExtracted {
		c.maxLen("albumName", p.AlbumName, 200)
	}
	if r := p.ImageRegion; r != nil {
		if r.X < 0 || r.Y < 0 {
			c.fail("imageRegion", "x and y must not be negative")
		}
		if r.Width <= 0 || r.Height <= 0 {
			c.fail("imageRegion", "width and height must be positive")
		}
	}
}

// TaskAlbum is an album as shown to (and corrected by) a human validator.
type TaskAlbum struct {
	AlbumIndex int    `json:"albumIndex"`
	AlbumName  string `json:"albumName"`
	Artist     string `json:"artist"`
	Year       int    `json:"year"`
}

// TaskEvent is a human validation task (seed 001). created carries
// executionId, imageS3Key, albums, taskToken and expiresAt; completed carries
// validatedData; expired carries nothing more.
type TaskEvent struct {
	WorkflowType  string      `json:"workflowType"`
	TaskID        string      `json:"taskId"`
	ExecutionID   string      `json:"executionId"`
	ImageS3Key    string      `json:"imageS3Key,omitempty"`
	Albums        []TaskAlbum `json:"albums,omitempty"`
	ValidatedData []TaskAlbum `json:"validatedData,omitempty"`
	TaskToken     string      `json:"taskToken,omitempty"`
	ExpiresAt     *time.Time  `json:"expiresAt,omitempty"`
}

// Subject is "albums/task/<taskId>".
func (p *TaskEvent) Subject() string { return "albums/task/" + p.TaskID }

func (p *TaskEvent) validate(c *checker, t string) {
	validateWorkflowAndExecution(c, p.WorkflowType, p.ExecutionID)
	c.required("taskId", p.TaskID)
	c.maxLen("taskId", p.TaskID, 128)
	checkAlbums := func(field string, albums []TaskAlbum) {
		for i, a := range albums {
			f := field + "[" + strconv.Itoa(i) + "]"
			if a.AlbumIndex < 1 {
				c.fail(f+".albumIndex", "must be at least 1")
			}
			if a.AlbumName == "" || len([]rune(a.AlbumName)) > 200 {
				c.fail(f+".albumName", "must be 1 to 200 characters")
			}
			if a.Artist == "" || len([]rune(a.Artist)) > 200 {
				c.fail(f+".artist", "must be 1 to 200 characters")
			}
			if a.Year < 1900 || a.Year > 2100 {
				c.fail(f+".year", "must be between 1900 and 2100")
			}
		}
	}
	switch t {
	case TypeTaskCreated:
		c.required("imageS3Key", p.ImageS3Key)
		c.required("taskToken", p.TaskToken)
		if len(p.Albums) == 0 {
			c.fail("albums", "must list at least one album")
		}
		if p.ExpiresAt == nil {
			c.fail("expiresAt", "is required")
		}
	case TypeTaskCompleted:
		if len(p.ValidatedData) == 0 {
			c.fail("validatedData", "must list at least one album")
		}
	}
	checkAlbums("albums", p.Albums)
	checkAlbums("validatedData", p.ValidatedData)
}

// MaxAlbums bounds the albums of one execution (albumIndex 1..MaxAlbums): an
// execution and all its album items must fit in one DynamoDB transaction.
const MaxAlbums = 50

// MaxDurationMs bounds an execution's durationMs (366 days).
const MaxDurationMs = 366 * 24 * 3600 * 1000

// MaxCostDecimals is how many decimal places an estimatedCost may have:
// costs are summed exactly in units of 10^-MaxCostDecimals USD.
const MaxCostDecimals = 9

// CostDecimals is the number of decimal places of v's shortest decimal form.
func CostDecimals(v float64) int {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if _, frac, ok := strings.Cut(s, "."); ok {
		return len(frac)
	}
	return 0
}
