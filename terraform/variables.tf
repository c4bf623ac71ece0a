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
