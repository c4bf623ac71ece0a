// Package api is streamfold's HTTP JSON API for dashboards: every access
// pattern of package query as a GET endpoint, with bearer-token access
// control, consistent error bodies and page-size limits. The same handler is
// served locally by `streamfold serve` and in AWS by the Lambda function in
// cmd/api behind a function URL (LambdaHandler adapts it).
//
// # Contract
//
// Routes are GET only (any other method: 405 with Allow: GET). Lists answer
// {"items":[...],"next":"<cursor>"} ("" at the end); pass next back as
// ?cursor= with the same other parameters. Single items answer the item
// itself. Errors always answer
//
//	{"error":{"code":"...","message":"...","param":"..."}}
//
// with code bad_cursor (400), invalid_parameter (400), not_found (404),
// unauthorized (401), method_not_allowed (405) or internal (500); param
// names the offending query parameter when there is one. Unknown query
// parameters are rejected (400) rather than ignored, so a typo never
// silently widens a query.
//
// Every /api/ path except /api/health requires "Authorization: Bearer
// <token>", compared in constant time; a missing or wrong token answers 401
// with WWW-Authenticate: Bearer. The dashboard mounted at "/" is static and
// holds no data, so it is served without a token (it asks the user for one).
//
// Every response carries the API's clock (Config.Now, the clock of the
// relative windows) in the X-Streamfold-Now header (NowHeader, NowFormat):
// the dashboard computes "now" on it instead of the browser's clock.
//
// The operations routes (GET /api/operations, GET
// /api/operations/deadletters) answer what Config.Operations (an
// *opsview.View) reads: each consumer's heartbeats, the last reconcile
// result, the recent gaps, the dead letters with the command replaying
// each; without Operations they answer 404.
//
// See docs/api.md for every route with curl examples. The handler is safe
// for concurrent use; it keeps no state between requests.
package api
