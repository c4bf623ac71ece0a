# The ingest function's producers (cmd/ingest tells them apart):
#
#   - HTTP through a function URL with authorization NONE, routed by path
#     (ingest.HTTPHandler, the handler `streamfold serve` serves locally):
#     POST /webhooks/github for GitHub, which cannot sign requests with
#     SigV4, so every delivery is authenticated in the handler by its
#     X-Hub-Signature-256 HMAC with the webhook secret; POST /events
#     (CloudEvents) and POST /eventbridge (one Step Functions event) with a
#     bearer token, the ingest token. Both secrets come from Secrets Manager;
#   - seed 002's single account-wide EventBridge rule for Step Functions
#     execution status changes; the function keeps agent state machines
#     only (Type=Agent, Application=StepFunctionsAgent tags) and writes the
#     events it can never append to the dead-letters table.

locals {
  # Secrets are deleted at once in dev (a destroyed stage can be re-created
  # under the same names) and after a recovery window elsewhere.
  secret_recovery_days = {
    dev   = 0
    stage = 7
    prod  = 30
  }
}

# The value is set out of band, never in Terraform state: see
# docs/deployment.md ("Secrets").
resource "aws_secretsmanager_secret" "github_webhook" {
  name                    = "${local.name}/github-webhook-secret"
  description             = "GitHub webhook secret: ${local.name}-ingest verifies X-Hub-Signature-256 with it. Set with put-secret-value (docs/deployment.md)."
  recovery_window_in_days = local.secret_recovery_days[var.stage]
}

resource "aws_secretsmanager_secret" "ingest_token" {
  name                    = "${local.name}/ingest-token"
  description             = "Bearer token of ${local.name}-ingest's POST /events and POST /eventbridge (16+ characters). Set with put-secret-value (docs/deployment.md)."
  recovery_window_in_days = local.secret_recovery_days[var.stage]
}

resource "aws_lambda_function_url" "webhook" {
  function_name      = aws_lambda_function.function["ingest"].function_name
  authorization_type = "NONE"
}

# A public function URL needs both statements (function URLs created since
# October 2025): InvokeFunctionUrl for the URL, and InvokeFunction limited
# to invocations that come through a function URL.
resource "aws_lambda_permission" "webhook_url" {
  statement_id           = "GitHubWebhookFunctionUrl"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = aws_lambda_function.function["ingest"].function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

resource "aws_lambda_permission" "webhook_invoke" {
  statement_id             = "GitHubWebhookInvokeViaFunctionUrl"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.function["ingest"].function_name
  principal                = "*"
  invoked_via_function_url = true
}

resource "aws_cloudwatch_event_rule" "step_functions" {
  name        = "${local.name}-step-functions-status"
  description = "Every Step Functions execution status change in the account (seed 002) to ${local.name}-ingest, which keeps agent executions."

  event_pattern = jsonencode({
    source        = ["aws.states"]
    "detail-type" = ["Step Functions Execution Status Change"]
    detail = {
      status = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"]
    }
  })
}

resource "aws_cloudwatch_event_target" "step_functions" {
  rule      = aws_cloudwatch_event_rule.step_functions.name
  target_id = "ingest"
  arn       = aws_lambda_function.function["ingest"].arn
}

resource "aws_lambda_permission" "step_functions" {
  statement_id  = "StepFunctionsStatusRule"
  action        = "lambda:InvokeFunction"
  function_name = aws_lambda_function.function["ingest"].function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.step_functions.arn
}

# EventBridge invokes asynchronously: Lambda retries a failed event twice,
# then sends it to the ingest failure queue (alarmed in alarms.tf).
resource "aws_lambda_function_event_invoke_config" "ingest" {
  function_name                = aws_lambda_function.function["ingest"].function_name
  maximum_retry_attempts       = 2
  maximum_event_age_in_seconds = 21600

  destination_config {
    on_failure {
      destination = aws_sqs_queue.failures["ingest"].arn
    }
  }
}
