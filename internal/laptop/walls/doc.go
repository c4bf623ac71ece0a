// Package walls checks the import walls of the module: which packages a set
// of root packages may reach through their (non-test) imports. It provides
// the project's own walls (Rules) and the check behind them; the test
// TestProjectWalls runs it on the module as the Lambda zips are built, so a
// wall broken by an import fails `go test ./internal/laptop/walls` naming the
// import chain that breaks it.
//
// The walls (docs/decisions.md, "Walls"):
//
//   - the Lambda binaries (cmd/<f> for each f of terraform/deploy.Functions)
//     reach nothing under internal/laptop/ (laptop-only code: the local stack,
//     the test tiers and fixtures, the local stream runner, tools), nor the
//     CLI, the Terraform driver, the workload simulator or a *test package;
//     and no package of the module that they reach imports testing,
//     net/http/httptest or os/exec itself (third-party and standard library
//     packages may: thrift imports testing, and that is not ours to wall);
//   - query and cmd/ingest do not reach projector: reading the projections
//     and appending events need the schema, not the fold.
//
// Deciding is apart from doing: Load runs `go list -deps -json` once for a
// build configuration and returns the import Graph; Check is a pure function
// of a Graph and Rules, unit-tested on hand-made graphs.
package walls
