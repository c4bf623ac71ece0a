-- p95 job queue time per repository: for each repository, over the GitHub
-- workflow jobs created (workflow_job.created_at, UTC) between from_date and
-- to_date that have started, the number of jobs and the 50th and 95th
-- percentile and the maximum of their queue time in milliseconds
-- (started_at - created_at).
--
-- Parameters:
--   from_date  first creation day, a quoted 'YYYY-MM-DD'
--   to_date    last creation day (inclusive), a quoted 'YYYY-MM-DD'
--
-- Agrees with: the workflow-jobs projection's overall_queue_duration_in_ms
-- (seed 003, projector JobState), grouped by repo_full_name for items whose
-- created_at falls in the range. As the projector does, it folds one row per
-- job subject (github/<installation>/job/<id>): created_at is the earliest
-- created_at of any workflow_job webhook, started_at the earliest started_at
-- of an in_progress or completed webhook (a queued body's started_at is only
-- its created_at), jobs that started before they were created are left out,
-- and the repository is the latest non-empty repo_full_name by (event_time,
-- event_id) over webhooks and runner events. In Athena approx_percentile is
-- an approximation; DuckDB runs it as the exact nearest-rank percentile (see
-- queries.DuckDBShims), which is what the acceptance test compares.
-- Reads event_time from from_date - 1 day (00:00 UTC) to before to_date + 2
-- days: the day(event_time) partitions from_date - 1 to to_date + 1.
WITH params AS (
  SELECT CAST(? AS DATE) AS from_date, CAST(? AS DATE) AS to_date
),
job_events AS (
  SELECT e.subject, e.event_id, e.event_time, e.event_type, e.repo_full_name, e.created_at, e.started_at
  FROM github_jobs e
  CROSS JOIN params p
  WHERE e.event_time >= p.from_date - INTERVAL '1' DAY
    AND e.event_time < p.to_date + INTERVAL '2' DAY
    AND e.subject LIKE 'github/%/job/%'
),
repository AS (
  SELECT subject, repo_full_name,
         row_number() OVER (PARTITION BY subject ORDER BY event_time DESC, event_id DESC) AS rn
  FROM job_events
  WHERE repo_full_name <> ''
),
jobs AS (
  SELECT subject,
         min(CASE WHEN event_type IN ('github.workflow_job.queued', 'github.workflow_job.waiting', 'github.workflow_job.in_progress', 'github.workflow_job.completed')
                  THEN created_at END) AS created_at,
         min(CASE WHEN event_type IN ('github.workflow_job.in_progress', 'github.workflow_job.completed')
                  THEN started_at END) AS started_at
  FROM job_events
  GROUP BY subject
),
queued AS (
  SELECT r.repo_full_name, date_diff('millisecond', j.created_at, j.started_at) AS queue_ms
  FROM jobs j
  JOIN repository r ON r.subject = j.subject AND r.rn = 1
  CROSS JOIN params p
  WHERE j.started_at >= j.created_at
    AND CAST(j.created_at AS DATE) BETWEEN p.from_date AND p.to_date
)
SELECT repo_full_name AS repository,
       count(*) AS jobs,
       approx_percentile(queue_ms, 0.5) AS p50_queue_ms,
       approx_percentile(queue_ms, 0.95) AS p95_queue_ms,
       max(queue_ms) AS max_queue_ms
FROM queued
GROUP BY repo_full_name
ORDER BY repository
