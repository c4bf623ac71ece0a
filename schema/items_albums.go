package schema

import "encoding/json"

// The workflows table (seed 001) is a single table of four entities, told
// apart by entityType: an execution (pk executionId, sk "metadata"), its
// albums (sk "album-<index>"), a human validation task (pk taskId, sk
// "metadata") and a workflow type's daily metrics row (pk date, sk
// "metrics-<workflowType>").

// Entity types of the workflows table.
const (
	EntityExecution = "execution"
	EntityAlbum     = "album"
	EntityTask      = "task"
	EntityMetrics   = "metrics"
)

// WorkflowExecutionItem is an sf/ldf album-workflow execution.
type WorkflowExecutionItem struct {
	PK         string `dynamodbav:"pk" json:"pk"`
	SK         string `dynamodbav:"sk" json:"sk"`
	EntityType string `dynamodbav:"entityType" json:"entityType"`
	// SortValue is always 0 for an execution.
	SortValue    int64  `dynamodbav:"sortValue" json:"sortValue"`
	WorkflowType string `dynamodbav:"workflowType,omitempty" json:"workflowType,omitempty"`
	ExecutionID  string `dynamodbav:"executionId,omitempty" json:"executionId,omitempty"`
	ImageS3Key   string `dynamodbav:"imageS3Key,omitempty" json:"imageS3Key,omitempty"`
	// Status is running, waiting, completed or failed.
	Status      string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	CurrentStep string `dynamodbav:"currentStep,omitempty" json:"currentStep,omitempty"`
	// StartTime is the started event's time, absent until it arrives.
	StartTime string `dynamodbav:"startTime,omitempty" json:"startTime,omitempty"`
	// EndTime, DurationMs, EstimatedCost and Error are the winning
	// terminal event's; absent while the execution runs (and each when
	// that event lacks it).
	EndTime       string   `dynamodbav:"endTime,omitempty" json:"endTime,omitempty"`
	DurationMs    *int64   `dynamodbav:"durationMs,omitempty" json:"durationMs,omitempty"`
	EstimatedCost *float64 `dynamodbav:"estimatedCost,omitempty" json:"estimatedCost,omitempty"`
	Error         string   `dynamodbav:"error,omitempty" json:"error,omitempty"`
	// CreatedAt is the start: the started event's time, else completion
	// minus durationMs, else the first event's time.
	CreatedAt string `dynamodbav:"createdAt,omitempty" json:"createdAt,omitempty"`
	// UpdatedAt is the latest recordedat of its events.
	UpdatedAt string `dynamodbav:"updatedAt,omitempty" json:"updatedAt,omitempty"`
}

// AlbumItem is one album of an execution. Each attribute is the latest
// value an album event carried, absent until one did (a validated year
// beats the extracted one).
type AlbumItem struct {
	PK         string `dynamodbav:"pk" json:"pk"`
	SK         string `dynamodbav:"sk" json:"sk"`
	EntityType string `dynamodbav:"entityType" json:"entityType"`
	// AlbumIndex is the album's place in the image; SortValue equals it.
	AlbumIndex      int64        `dynamodbav:"albumIndex" json:"albumIndex"`
	SortValue       int64        `dynamodbav:"sortValue" json:"sortValue"`
	WorkflowType    string       `dynamodbav:"workflowType,omitempty" json:"workflowType,omitempty"`
	ExecutionID     string       `dynamodbav:"executionId,omitempty" json:"executionId,omitempty"`
	AlbumName       string       `dynamodbav:"albumName,omitempty" json:"albumName,omitempty"`
	Artist          string       `dynamodbav:"artist,omitempty" json:"artist,omitempty"`
	Year            *int64       `dynamodbav:"year,omitempty" json:"year,omitempty"`
	YearValidated   *bool        `dynamodbav:"yearValidated,omitempty" json:"yearValidated,omitempty"`
	YearOriginal    *int64       `dynamodbav:"yearOriginal,omitempty" json:"yearOriginal,omitempty"`
	PriceEstimate   *float64     `dynamodbav:"priceEstimate,omitempty" json:"priceEstimate,omitempty"`
	PriceConfidence *float64     `dynamodbav:"priceConfidence,omitempty" json:"priceConfidence,omitempty"`
	PriceSource     string       `dynamodbav:"priceSource,omitempty" json:"priceSource,omitempty"`
	ImageRegion     *RegionValue `dynamodbav:"imageRegion,omitempty" json:"imageRegion,omitempty"`
	// CreatedAt is the album's first event's time, UpdatedAt the latest
	// recordedat of its events.
	CreatedAt string `dynamodbav:"createdAt,omitempty" json:"createdAt,omitempty"`
	UpdatedAt string `dynamodbav:"updatedAt,omitempty" json:"updatedAt,omitempty"`
}

// RegionValue is an album's region of the image, every field present.
type RegionValue struct {
	X      int64 `dynamodbav:"x" json:"x"`
	Y      int64 `dynamodbav:"y" json:"y"`
	Width  int64 `dynamodbav:"width" json:"width"`
	Height int64 `dynamodbav:"height" json:"height"`
}

// TaskItem is a human validation task.
type TaskItem struct {
	PK         string `dynamodbav:"pk" json:"pk"`
	SK         string `dynamodbav:"sk" json:"sk"`
	EntityType string `dynamodbav:"entityType" json:"entityType"`
	// SortValue is createdAt in epoch milliseconds.
	SortValue int64 `dynamodbav:"sortValue" json:"sortValue"`
	// Status is pending, completed or expired.
	Status       string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	TaskID       string `dynamodbav:"taskId,omitempty" json:"taskId,omitempty"`
	ExecutionID  string `dynamodbav:"executionId,omitempty" json:"executionId,omitempty"`
	WorkflowType string `dynamodbav:"workflowType,omitempty" json:"workflowType,omitempty"`
	ImageS3Key   string `dynamodbav:"imageS3Key,omitempty" json:"imageS3Key,omitempty"`
	// Albums are the albums to validate, ValidatedData the answer; each
	// absent until an event carried it.
	Albums        []TaskAlbumValue `dynamodbav:"albums,omitempty" json:"albums,omitempty"`
	ValidatedData []TaskAlbumValue `dynamodbav:"validatedData,omitempty" json:"validatedData,omitempty"`
	TaskToken     string           `dynamodbav:"taskToken,omitempty" json:"taskToken,omitempty"`
	ExpiresAt     string           `dynamodbav:"expiresAt,omitempty" json:"expiresAt,omitempty"`
	// CreatedAt is the created event's time, or the first event's until it
	// is known (GSI1's second sort attribute).
	CreatedAt   string `dynamodbav:"createdAt,omitempty" json:"createdAt,omitempty"`
	CompletedAt string `dynamodbav:"completedAt,omitempty" json:"completedAt,omitempty"`
	UpdatedAt   string `dynamodbav:"updatedAt,omitempty" json:"updatedAt,omitempty"`
}

// TaskAlbumValue is one album of a task, every field present.
type TaskAlbumValue struct {
	AlbumIndex int64  `dynamodbav:"albumIndex" json:"albumIndex"`
	AlbumName  string `dynamodbav:"albumName" json:"albumName"`
	Artist     string `dynamodbav:"artist" json:"artist"`
	Year       int64  `dynamodbav:"year" json:"year"`
}

// WorkflowMetricsItem is a workflow type's daily metrics row, a counter
// row the projector writes whole from its executions' contributions. The
// sums are absent (0) until added to; totalCost and the averages are
// decimals, kept as their exact text.
type WorkflowMetricsItem struct {
	// PK is the date ("2006-01-02"), SK "metrics-<workflowType>".
	PK           string `dynamodbav:"pk" json:"pk"`
	SK           string `dynamodbav:"sk" json:"sk"`
	EntityType   string `dynamodbav:"entityType,omitempty" json:"entityType,omitempty"`
	WorkflowType string `dynamodbav:"workflowType,omitempty" json:"workflowType,omitempty"`
	Date         string `dynamodbav:"date,omitempty" json:"date,omitempty"`
	// Period is "daily"; Status is "daily" too (GSI1's first sort
	// attribute); CreatedAt is the date's midnight.
	Period    string `dynamodbav:"period,omitempty" json:"period,omitempty"`
	Status    string `dynamodbav:"status,omitempty" json:"status,omitempty"`
	CreatedAt string `dynamodbav:"createdAt,omitempty" json:"createdAt,omitempty"`
	// ExecutionCount counts the day's executions, SuccessCount and
	// FailureCount the completed and failed ones.
	ExecutionCount json.Number `dynamodbav:"executionCount,omitempty" json:"executionCount,omitempty"`
	SuccessCount   json.Number `dynamodbav:"successCount,omitempty" json:"successCount,omitempty"`
	FailureCount   json.Number `dynamodbav:"failureCount,omitempty" json:"failureCount,omitempty"`
	// DurationSumMs sums durationMs over the DurationCount terminal
	// executions that report it.
	DurationSumMs json.Number `dynamodbav:"durationSumMs,omitempty" json:"durationSumMs,omitempty"`
	DurationCount json.Number `dynamodbav:"durationCount,omitempty" json:"durationCount,omitempty"`
	// TotalCost sums estimatedCost (dollars).
	TotalCost json.Number `dynamodbav:"totalCost,omitempty" json:"totalCost,omitempty"`
	// AvgDurationMs and AvgCostPerExecution are derived with every write
	// (projector.DeriveRow): durationSumMs / durationCount and totalCost /
	// executionCount, "0" when the divisor is.
	AvgDurationMs       json.Number `dynamodbav:"avgDurationMs,omitempty" json:"avgDurationMs,omitempty"`
	AvgCostPerExecution json.Number `dynamodbav:"avgCostPerExecution,omitempty" json:"avgCostPerExecution,omitempty"`
}
