# The read API and dashboard (cmd/api) behind a function URL with
# authorization NONE. Not AWS_IAM: the dashboard is served by the same
# function to browsers, and browsers cannot sign requests with SigV4. The
# API checks a bearer token (from Secrets Manager) in the handler instead;
# its pagination cursors are signed with a second secret.

resource "aws_secretsmanager_secret" "api_token" {
  name                    = "${local.name}/api-token"
  description             = "Bearer token ${local.name}-api accepts. Set with put-secret-value (docs/deployment.md)."
  recovery_window_in_days = local.secret_recovery_days[var.stage]
}

resource "aws_secretsmanager_secret" "cursor_key" {
  name                    = "${local.name}/api-cursor-key"
  description             = "Key ${local.name}-api signs pagination cursors with. Set with put-secret-value (docs/deployment.md)."
  recovery_window_in_days = local.secret_recovery_days[var.stage]
}

resource "aws_lambda_function_url" "api" {
  function_name      = aws_lambda_function.function["api"].function_name
  authorization_type = "NONE"
}

resource "aws_lambda_permission" "api_url" {
  statement_id           = "ApiFunctionUrl"
  action                 = "lambda:InvokeFunctionUrl"
  function_name          = aws_lambda_function.function["api"].function_name
  principal              = "*"
  function_url_auth_type = "NONE"
}

resource "aws_lambda_permission" "api_invoke" {
  statement_id             = "ApiInvokeViaFunctionUrl"
  action                   = "lambda:InvokeFunction"
  function_name            = aws_lambda_function.function["api"].function_name
  principal                = "*"
  invoked_via_function_url = true
}
