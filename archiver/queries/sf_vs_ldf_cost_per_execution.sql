-- sf vs ldf cost per execution: for each UTC day and album workflow type
-- (step-functions, durable-functions), the executions that started that day,
-- how many completed and failed, their total estimated cost in USD, the
-- average cost per execution (total cost / executions, running ones
-- included, as seed 001's avgCostPerExecution) and the average duration of
-- those that reported one.
--
-- Parameters:
--   from_date  first day reported, a quoted 'YYYY-MM-DD'
--   to_date    last day reported (inclusive), a quoted 'YYYY-MM-DD'
--
-- Agrees with: the workflows projection's daily metrics rows (pk = date,
-- sk = metrics-<workflowType>, projector AlbumExecutionState.Contributions):
-- executionCount, successCount, failureCount, totalCost, avgCostPerExecution
-- = totalCost / executionCount, avgDurationMs = durationSumMs / durationCount.
-- As the projector does, it folds one row per execution subject
-- (albums/execution/<id>, album events included): the workflow type is the
-- least non-empty one; the outcome (status, durationMs, estimatedCost) is
-- the completed or failed event latest by (event_time, event_id); the day
-- is that of the earliest started event, else of the outcome's time minus
-- its durationMs, else of the earliest event; costs are summed exactly in
-- nano-dollars (estimatedCost has at most 9 decimal places), as the
-- projector's counters are.
-- Reads event_time from from_date - 1 day (00:00 UTC) to before to_date + 2
-- days: the day(event_time) partitions from_date - 1 to to_date + 1.
WITH params AS (
  SELECT CAST(? AS DATE) AS from_date, CAST(? AS DATE) AS to_date
),
execution_events AS (
  SELECT e.subject, e.event_id, e.event_time, e.event_type, e.workflow_type, e.duration_ms, e.estimated_cost
  FROM album_workflow e
  CROSS JOIN params p
  WHERE e.event_time >= p.from_date - INTERVAL '1' DAY
    AND e.event_time < p.to_date + INTERVAL '2' DAY
    AND e.subject LIKE 'albums/execution/%'
),
outcome AS (
  SELECT subject, event_type, event_time, duration_ms, estimated_cost,
         row_number() OVER (PARTITION BY subject ORDER BY event_time DESC, event_id DESC) AS rn
  FROM execution_events
  WHERE event_type IN ('album.execution.completed', 'album.execution.failed')
),
executions AS (
  SELECT subject,
         min(CASE WHEN workflow_type <> '' THEN workflow_type END) AS workflow_type,
         min(CASE WHEN event_type = 'album.execution.started' THEN event_time END) AS started_at,
         min(event_time) AS first_at
  FROM execution_events
  GROUP BY subject
),
dated AS (
  SELECT CAST(COALESCE(x.started_at,
                       o.event_time - INTERVAL '0.001' SECOND * o.duration_ms,
                       x.first_at) AS DATE) AS metric_date,
         x.workflow_type,
         o.event_type AS outcome,
         o.duration_ms,
         CAST(floor(o.estimated_cost * 1e9 + 0.5) AS BIGINT) AS cost_nanos
  FROM executions x
  LEFT JOIN outcome o ON o.subject = x.subject AND o.rn = 1
  WHERE x.workflow_type IS NOT NULL
)
SELECT CAST(d.metric_date AS VARCHAR) AS metric_date,
       d.workflow_type,
       count(*) AS executions,
       sum(CASE WHEN d.outcome = 'album.execution.completed' THEN 1 ELSE 0 END) AS succeeded,
       sum(CASE WHEN d.outcome = 'album.execution.failed' THEN 1 ELSE 0 END) AS failed,
       CAST(COALESCE(sum(d.cost_nanos), 0) AS DOUBLE) / 1e9 AS total_cost_usd,
       CAST(COALESCE(sum(d.cost_nanos), 0) AS DOUBLE) / 1e9 / count(*) AS avg_cost_per_execution,
       CAST(sum(d.duration_ms) AS DOUBLE) / NULLIF(count(d.duration_ms), 0) AS avg_duration_ms
FROM dated d
CROSS JOIN params p
WHERE d.metric_date BETWEEN p.from_date AND p.to_date
GROUP BY d.metric_date, d.workflow_type
ORDER BY metric_date, workflow_type
