-- Message success rate per stage: for each UTC day and rez_agent stage, the
-- messages created that day, how many are in each status now, and
-- success_rate = completed / (completed + failed) (NULL while none finished),
-- seed 004's SuccessRate.
--
-- Parameters:
--   from_date  first day reported, a quoted 'YYYY-MM-DD'
--   to_date    last day reported (inclusive), a quoted 'YYYY-MM-DD'
--
-- Agrees with: the metrics projection's per-stage rows (scope =
-- 'messages/<stage>', date; projector MessageState.Contributions): total,
-- created, queued, processing, completed, failed. As the projector does, it
-- folds one row per message subject (messages/<message_id>): the stage is
-- the least non-empty one; the status is that of the highest-ranked event
-- (created < queued < processing < completed = failed), ties broken by the
-- later (event_time, event_id), so a late processing never hides completed;
-- the day is that of the earliest created event, else of the earliest event.
-- Reads event_time from from_date - 1 day (00:00 UTC) to before to_date + 2
-- days: the day(event_time) partitions from_date - 1 to to_date + 1.
WITH params AS (
  SELECT CAST(? AS DATE) AS from_date, CAST(? AS DATE) AS to_date
),
message_events AS (
  SELECT e.subject, e.event_id, e.event_time, e.event_type, e.stage
  FROM messages e
  CROSS JOIN params p
  WHERE e.event_time >= p.from_date - INTERVAL '1' DAY
    AND e.event_time < p.to_date + INTERVAL '2' DAY
    AND e.event_type IN ('rez.message.created', 'rez.message.queued', 'rez.message.processing', 'rez.message.completed', 'rez.message.failed')
),
final_status AS (
  SELECT subject,
         CASE event_type
           WHEN 'rez.message.created' THEN 'created'
           WHEN 'rez.message.queued' THEN 'queued'
           WHEN 'rez.message.processing' THEN 'processing'
           WHEN 'rez.message.completed' THEN 'completed'
           WHEN 'rez.message.failed' THEN 'failed'
         END AS status,
         row_number() OVER (
           PARTITION BY subject
           ORDER BY CASE event_type
                      WHEN 'rez.message.created' THEN 0
                      WHEN 'rez.message.queued' THEN 1
                      WHEN 'rez.message.processing' THEN 2
                      WHEN 'rez.message.completed' THEN 3
                      WHEN 'rez.message.failed' THEN 3
                    END DESC, event_time DESC, event_id DESC
         ) AS rn
  FROM message_events
),
message_rows AS (
  SELECT subject,
         min(CASE WHEN stage <> '' THEN stage END) AS stage,
         COALESCE(min(CASE WHEN event_type = 'rez.message.created' THEN event_time END),
                  min(event_time)) AS created_at
  FROM message_events
  GROUP BY subject
),
dated AS (
  SELECT CAST(m.created_at AS DATE) AS metric_date, m.stage, s.status
  FROM message_rows m
  JOIN final_status s ON s.subject = m.subject AND s.rn = 1
  WHERE m.stage IS NOT NULL
)
SELECT CAST(d.metric_date AS VARCHAR) AS metric_date,
       d.stage,
       count(*) AS messages,
       sum(CASE WHEN d.status = 'created' THEN 1 ELSE 0 END) AS created,
       sum(CASE WHEN d.status = 'queued' THEN 1 ELSE 0 END) AS queued,
       sum(CASE WHEN d.status = 'processing' THEN 1 ELSE 0 END) AS processing,
       sum(CASE WHEN d.status = 'completed' THEN 1 ELSE 0 END) AS completed,
       sum(CASE WHEN d.status = 'failed' THEN 1 ELSE 0 END) AS failed,
       CAST(sum(CASE WHEN d.status = 'completed' THEN 1 ELSE 0 END) AS DOUBLE)
         / NULLIF(sum(CASE WHEN d.status IN ('completed', 'failed') THEN 1 ELSE 0 END), 0) AS success_rate
FROM dated d
CROSS JOIN params p
WHERE d.metric_date BETWEEN p.from_date AND p.to_date
GROUP BY d.metric_date, d.stage
ORDER BY metric_date, stage
