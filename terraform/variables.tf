variable "prefix" {
  description = "First part of every resource name, \"<prefix>-<stage>-<logical>\" (schema.Naming.Prefix): 1-63 lowercase letters, digits or '-'."
  type        = string
  default     = "streamfold"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9-]{0,62}$", var.prefix))
    error_message = "prefix must be 1-63 lowercase letters, digits or '-', starting with a letter or digit."
  }
}

variable "stage" {
  description = "Deployment stage, the second part of every resource name: dev, stage or prod. Point-in-time recovery is off in dev."
  type        = string

  validation {
    condition     = contains(["dev", "stage", "prod"], var.stage)
    error_message = "stage must be one of dev, stage, prod."
  }
}

variable "tags" {
  description = "Tags added to every resource that takes tags."
  type        = map(string)
  default     = {}
}

variable "package_dir" {
  description = "Directory holding the Lambda zips built by `make package` (projector.zip, archiver.zip, ingest.zip, api.zip, reconcile.zip). Empty means ../dist relative to this directory."
  type        = string
  default     = ""
}

variable "log_retention_days" {
  description = "Days each function's CloudWatch log group keeps its logs."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "log_retention_days must be one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ... 3653)."
  }
}

variable "lambda_memory_mb" {
  description = "Memory (MB) of each function, by function name: projector, archiver, ingest, api, reconcile."
  type        = map(number)
  default = {
    projector = 512
    archiver  = 1024
    ingest    = 256
    api       = 512
    reconcile = 1024
  }

  validation {
    condition     = length(setsubtract(["projector", "archiver", "ingest", "api", "reconcile"], keys(var.lambda_memory_mb))) == 0 && alltrue([for v in values(var.lambda_memory_mb) : v >= 128 && v <= 10240])
    error_message = "lambda_memory_mb needs projector, archiver, ingest, api and reconcile, each 128-10240."
  }
}

variable "lambda_timeout_seconds" {
  description = "Timeout (seconds) of each function, by function name: projector, archiver, ingest, api, reconcile (a run must finish within it: reconcile_window bounds its work)."
  type        = map(number)
  default = {
    projector = 120
    archiver  = 300
    ingest    = 15
    api       = 15
    reconcile = 900
  }

  validation {
    condition     = length(setsubtract(["projector", "archiver", "ingest", "api", "reconcile"], keys(var.lambda_timeout_seconds))) == 0 && alltrue([for v in values(var.lambda_timeout_seconds) : v >= 1 && v <= 900])
    error_message = "lambda_timeout_seconds needs projector, archiver, ingest, api and reconcile, each 1-900."
  }
}

variable "projector_batch_size" {
  description = "Largest batch of stream records the projector's event source mapping hands to one invocation (1-10000)."
  type        = number
  default     = 500

  validation {
    condition     = var.projector_batch_size >= 1 && var.projector_batch_size <= 10000
    error_message = "projector_batch_size must be 1-10000."
  }
}

variable "projector_batching_window_seconds" {
  description = "Seconds the projector's event source mapping may wait to fill a batch (0-300); lower means fresher projections, higher means fewer, larger transactions."
  type        = number
  default     = 1

  validation {
    condition     = var.projector_batching_window_seconds >= 0 && var.projector_batching_window_seconds <= 300
    error_message = "projector_batching_window_seconds must be 0-300."
  }
}

variable "archiver_batch_size" {
  description = "Largest batch of stream records the archiver's event source mapping hands to one invocation (1-10000); larger batches mean fewer, larger Parquet files."
  type        = number
  default     = 5000

  validation {
    condition     = var.archiver_batch_size >= 1 && var.archiver_batch_size <= 10000
    error_message = "archiver_batch_size must be 1-10000."
  }
}

variable "archiver_batching_window_seconds" {
  description = "Seconds the archiver's event source mapping may wait to fill a batch (0-300); the archive is not latency sensitive, so a long window avoids small files."
  type        = number
  default     = 120

  validation {
    condition     = var.archiver_batching_window_seconds >= 0 && var.archiver_batching_window_seconds <= 300
    error_message = "archiver_batching_window_seconds must be 0-300."
  }
}

variable "projector_maximum_retry_attempts" {
  description = "Retries of a failing projector batch before its records go to the projector's on-failure queue (0-10000; -1 = until the records reach stream_maximum_record_age_seconds). Poison records never fail a batch (the projector dead-letters them), so a failing batch is an outage or a conflict storm."
  type        = number
  default     = 10

  validation {
    condition     = var.projector_maximum_retry_attempts >= -1 && var.projector_maximum_retry_attempts <= 10000
    error_message = "projector_maximum_retry_attempts must be -1 or 0-10000."
  }
}

variable "archiver_maximum_retry_attempts" {
  description = "Retries of a failing archiver batch (0-10000; -1 = until the records reach stream_maximum_record_age_seconds). Default -1: the archiver writes poison records under errors/, so a failing batch is an S3 outage and its retry rewrites the same objects (cmd/archiver)."
  type        = number
  default     = -1

  validation {
    condition     = var.archiver_maximum_retry_attempts >= -1 && var.archiver_maximum_retry_attempts <= 10000
    error_message = "archiver_maximum_retry_attempts must be -1 or 0-10000."
  }
}

variable "stream_maximum_record_age_seconds" {
  description = "Age (seconds) after which each stream event source mapping gives up on a record and sends it to the consumer's on-failure queue (60-86400: stream records live 24 h, and a bounded age is what sends a record that is retried forever to the queue)."
  type        = number
  default     = 86400

  validation {
    condition     = var.stream_maximum_record_age_seconds >= 60 && var.stream_maximum_record_age_seconds <= 86400
    error_message = "stream_maximum_record_age_seconds must be 60-86400."
  }
}

variable "archive_bucket_name" {
  description = "Name of the archive bucket. Empty means \"<prefix>-<stage>-archive\" (schema.Naming.BucketName); S3 names are global, so set this when that one is taken."
  type        = string
  default     = ""
}

variable "archive_prefix" {
  description = "Key prefix of the archive in the bucket (the archiver's ARCHIVE_PREFIX): each Iceberg table under <prefix>/<table>/ (metadata/ and data/), poison records under <prefix>/errors/."
  type        = string
  default     = "archive"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9_-]*$", var.archive_prefix))
    error_message = "archive_prefix must be lowercase letters, digits, '_' or '-', with no slashes."
  }
}

variable "archive_transition_days" {
  description = "Days after which the archive's Parquet data files (<prefix>/<table>/data/) move to archive_storage_class (seed 004: a year); the tables' metadata stays in S3 Standard."
  type        = number
  default     = 365
}

variable "archive_storage_class" {
  description = "Storage class the archive's Parquet data files move to after archive_transition_days: GLACIER_IR (the default: Glacier Instant Retrieval, read like Standard, so Athena, compaction, rebuild and verify keep reading it), GLACIER (seed 004's choice, cheaper to keep; Athena cannot read such objects and rebuild/verify fail on them until they are restored: docs/archiver.md) or DEEP_ARCHIVE (the same, restores take hours). Only data files move: the Iceberg metadata stays in S3 Standard."
  type        = string
  default     = "GLACIER_IR"

  validation {
    condition     = contains(["GLACIER", "GLACIER_IR", "DEEP_ARCHIVE"], var.archive_storage_class)
    error_message = "archive_storage_class must be GLACIER, GLACIER_IR or DEEP_ARCHIVE."
  }
}

variable "archive_noncurrent_version_days" {
  description = "Days an overwritten or deleted archive object version is kept where versioning is on (stage, prod) before it expires."
  type        = number
  default     = 30
}

variable "athena_results_days" {
  description = "Days Athena query results are kept under athena-results/ in the archive bucket."
  type        = number
  default     = 30
}

variable "athena_bytes_scanned_cutoff" {
  description = "Largest number of bytes one Athena query in the workgroup may scan before it is cancelled (at least 10 MB); bounds the cost of a query at $5 per TB scanned."
  type        = number
  default     = 10737418240

  validation {
    condition     = var.athena_bytes_scanned_cutoff >= 10485760
    error_message = "athena_bytes_scanned_cutoff must be at least 10485760 (10 MB)."
  }
}

variable "lambda_reserved_concurrency" {
  description = "Reserved concurrency of each function: projector, archiver, ingest, api, reconcile. For the public function URLs (ingest, api) it is a ceiling, so that a flood of requests cannot take the account's concurrency from the stream consumers; for the stream consumers (one invocation per shard) it is a guarantee; for reconcile (1) a ceiling: one run at a time, an on-demand run during the scheduled one is throttled. -1 reserves none (accounts whose concurrency limit is too low to reserve: AWS keeps 100 unreserved)."
  type        = map(number)
  default = {
    projector = 10
    archiver  = 10
    ingest    = 50
    api       = 20
    reconcile = 1
  }

  validation {
    condition     = length(setsubtract(["projector", "archiver", "ingest", "api", "reconcile"], keys(var.lambda_reserved_concurrency))) == 0 && alltrue([for v in values(var.lambda_reserved_concurrency) : v == -1 || v >= 1])
    error_message = "lambda_reserved_concurrency needs projector, archiver, ingest, api and reconcile, each -1 (none) or at least 1 (0 would stop the function)."
  }
}

variable "sfn_payloads" {
  description = "What the ingest function keeps of an agent execution's input, output and cause (prompts, answers, failure texts) in the event log and the archive: \"hash\" (their SHA-256 only; the default), \"drop\" (null) or \"keep\" (verbatim, readable by every Athena user of the archive). See docs/security.md."
  type        = string
  default     = "hash"

  validation {
    condition     = contains(["hash", "drop", "keep"], var.sfn_payloads)
    error_message = "sfn_payloads must be hash, drop or keep."
  }
}

variable "iterator_age_alarm_ms" {
  description = "IteratorAge (milliseconds) of the projector's or archiver's stream mapping above which its alarm fires: how far behind the stream a consumer may fall."
  type        = number
  default     = 300000
}

variable "function_errors_alarm_threshold" {
  description = "Errors per 5 minutes of one function above which its Errors alarm fires (0: any error)."
  type        = number
  default     = 0
}

variable "alarm_sns_topic_arn" {
  description = "SNS topic ARN that alarms notify (alarm and OK). Empty means the alarms only change state, with no notification."
  type        = string
  default     = ""

  validation {
    condition     = var.alarm_sns_topic_arn == "" || can(regex("^arn:aws[a-z-]*:sns:", var.alarm_sns_topic_arn))
    error_message = "alarm_sns_topic_arn must be empty or an SNS topic ARN."
  }
}

variable "failures_bucket_name" {
  description = "Name of the bucket the stream consumers' event source mappings write failed batches to (onfailure.tf). Empty means \"<prefix>-<stage>-failures\"; S3 names are global, so set this when that one is taken."
  type        = string
  default     = ""
}

variable "failures_retention_days" {
  description = "Days a failed batch object is kept in the failures bucket before it expires (redrive it before then: docs/deployment.md)."
  type        = number
  default     = 90

  validation {
    condition     = var.failures_retention_days >= 1
    error_message = "failures_retention_days must be at least 1."
  }
}

variable "maintenance_compact_schedule" {
  description = "EventBridge Scheduler expression (UTC) of the archive's daily compaction of the day before yesterday (maintenance.tf)."
  type        = string
  default     = "cron(15 3 * * ? *)"
}

variable "maintenance_paused" {
  description = "Maintenance tasks (compact, verify) whose schedule is disabled and whose missed alarm does not notify: e.g. [\"compact\"] while an operator repairs or restores the archive by hand (docs/deployment.md). Empty (the default): every task runs daily."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.maintenance_paused : contains(["compact", "verify"], t)])
    error_message = "maintenance_paused may hold only \"compact\" and \"verify\"."
  }
}

variable "maintenance_verify_schedule" {
  description = "EventBridge Scheduler expression (UTC) of the daily verify of the projections against the archive (maintenance.tf). After the compaction, so that it reads few objects."
  type        = string
  default     = "cron(45 4 * * ? *)"
}

variable "reconcile_schedule" {
  description = "EventBridge Scheduler expression (UTC) of the scheduled reconcile (reconcile.tf): daily by default, after the archive's verify."
  type        = string
  default     = "cron(30 5 * * ? *)"
}

variable "reconcile_window" {
  description = "How far back each scheduled reconcile checks, a Go duration (e.g. \"26h\"): the schedule's interval plus slack, so that runs overlap. Also the default of an on-demand invocation without \"since\"."
  type        = string
  default     = "26h"

  validation {
    condition     = can(regex("^([0-9]+(\\.[0-9]+)?(h|m|s))+$", var.reconcile_window))
    error_message = "reconcile_window must be a Go duration of hours, minutes or seconds, such as 26h or 90m."
  }
}

variable "reconcile_heal" {
  description = "Whether reconcile heals what it finds missing, feeding the events through the projector's commit and the archiver's batch (idempotent, safe while the consumers run). Only when true does its role get those writes; false (the default): it reports only."
  type        = bool
  default     = false
}

variable "gsi_shards" {
  description = "Write shards of the low-cardinality GSIs (executions StatusDateIndex and AgentDateIndex, workflows GSI1, messages' stage, status and message_type indexes; schema.TablesFor). 0 or 1: off, the seeds' indexes and items. 2-16: each becomes a variant whose hash key adds the Number attribute gsiShard, and the projector and api functions get STREAMFOLD_GSI_SHARDS. Changing it replaces those indexes and needs a rebuild (docs/deployment.md, \"Write-sharded indexes\")."
  type        = number
  default     = 0

  validation {
    condition     = var.gsi_shards >= 0 && var.gsi_shards <= 16 && floor(var.gsi_shards) == var.gsi_shards
    error_message = "gsi_shards must be a whole number from 0 (off) to 16."
  }
}
