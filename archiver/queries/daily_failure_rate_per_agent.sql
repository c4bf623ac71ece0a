-- Daily failure rate per agent: for each UTC day and Step Functions agent,
-- the executions that started that day, how many are still running, how the
-- others ended, and failure_rate = (FAILED + TIMED_OUT + ABORTED) / finished
-- executions (NULL when none finished).
--
-- Parameters:
--   from_date  first day reported, a quoted 'YYYY-MM-DD'
--   to_date    last day reported (inclusive), a quoted 'YYYY-MM-DD'
--
-- Agrees with: the executions projection (seed 002 index, projector
-- AgentExecutionState): its items grouped by (date of startDate, agentName),
-- counted by status. As the projector does, it folds only events whose
-- stateMachineTags carry Type=Agent and Application=StepFunctionsAgent
-- (is_agent), one
-- row per execution: agent from the least stateMachineArn with one stage
-- suffix (-dev, -stage, -staging, -prod, -production, -test) removed, start
-- from the earliest startDate, status from the highest-ranked event
-- (RUNNING < SUCCEEDED = FAILED = TIMED_OUT = ABORTED),
-- ties broken by the later (event_time, event_id), so a late RUNNING never
-- hides a terminal status.
-- Reads event_time from from_date - 1 day (00:00 UTC) to before to_date + 2
-- days: the day(event_time) partitions from_date - 1 to to_date + 1.
WITH params AS (
  SELECT CAST(? AS DATE) AS from_date, CAST(? AS DATE) AS to_date
),
agent_events AS (
  SELECT e.subject, e.event_id, e.event_time, e.status, e.state_machine_arn, e.start_date
  FROM agent_executions e
  CROSS JOIN params p
  WHERE e.event_time >= p.from_date - INTERVAL '1' DAY
    AND e.event_time < p.to_date + INTERVAL '2' DAY
    AND e.is_agent
),
final_status AS (
  SELECT subject, status,
         row_number() OVER (
           PARTITION BY subject
           ORDER BY CASE status
                      WHEN 'RUNNING' THEN 0
                      WHEN 'SUCCEEDED' THEN 1
                      WHEN 'FAILED' THEN 1
                      WHEN 'TIMED_OUT' THEN 1
                      WHEN 'ABORTED' THEN 1
                    END DESC, event_time DESC, event_id DESC
         ) AS rn
  FROM agent_events
  WHERE status IN ('RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED')
),
executions AS (
  SELECT subject, min(state_machine_arn) AS state_machine_arn, min(start_date) AS start_date
  FROM agent_events
  GROUP BY subject
),
dated AS (
  SELECT CAST(x.start_date AS DATE) AS metric_date,
         regexp_extract(split_part(x.state_machine_arn, ':', 7),
                        '^(.+?)(-(dev|stage|staging|prod|production|test))?$', 1) AS agent_name,
         s.status
  FROM executions x
  JOIN final_status s ON s.subject = x.subject AND s.rn = 1
)
SELECT CAST(d.metric_date AS VARCHAR) AS metric_date,
       d.agent_name,
       count(*) AS executions,
       sum(CASE WHEN d.status = 'RUNNING' THEN 1 ELSE 0 END) AS running,
       sum(CASE WHEN d.status = 'SUCCEEDED' THEN 1 ELSE 0 END) AS succeeded,
       sum(CASE WHEN d.status = 'FAILED' THEN 1 ELSE 0 END) AS failed,
       sum(CASE WHEN d.status = 'TIMED_OUT' THEN 1 ELSE 0 END) AS timed_out,
       sum(CASE WHEN d.status = 'ABORTED' THEN 1 ELSE 0 END) AS aborted,
       CAST(sum(CASE WHEN d.status IN ('FAILED', 'TIMED_OUT', 'ABORTED') THEN 1 ELSE 0 END) AS DOUBLE)
         / NULLIF(sum(CASE WHEN d.status IN ('SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED') THEN 1 ELSE 0 END), 0) AS failure_rate
FROM dated d
CROSS JOIN params p
WHERE d.metric_date BETWEEN p.from_date AND p.to_date
GROUP BY d.metric_date, d.agent_name
ORDER BY metric_date, agent_name
