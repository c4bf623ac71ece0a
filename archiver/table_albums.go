package archiver

import "github.com/streamfold/streamfold/schema"

// TableAlbumWorkflow holds schema.DomainAlbums: album.*.
const TableAlbumWorkflow = "album_workflow"

type (
	albumExP = *schema.AlbumExecutionEvent
	albumP   = *schema.AlbumEvent
	taskP    = *schema.TaskEvent
)

// albumWorkflowCols are the typed columns, in file order: add a column only at the
// end (see newTableDef).
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

func init() {
	registerTable(newTableDef(schema.DomainAlbums, TableAlbumWorkflow, "sf/ldf album workflow events (album.*): executions, albums and human validation tasks, one row per event.", albumWorkflowCols))
}
