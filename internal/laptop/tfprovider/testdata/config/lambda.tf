resource "aws_lambda_function" "f" {
  function_name = "f"
}
