package walls

import "github.com/streamfold/streamfold/terraform/deploy"

// Module is the streamfold module's path.
const Module = "github.com/streamfold/streamfold"

// LaptopOnly are the module's packages that run on a laptop (or in CI), never
// in a Lambda function: everything under internal/laptop/, the CLI and the
// operator's workflows it runs (toolkit/), the Terraform driver, the workload simulator and every *test package (test
// helpers outside internal/laptop, such as projector/storetest).
var LaptopOnly = []string{
	Module + "/internal/laptop/...",
	Module + "/cmd/streamfold",
	Module + "/toolkit/...",
	Module + "/terraform/...",
	Module + "/ingest/simulate/...",
	Module + "/*test",
	Module + "/.../*test",
}

// TestOnly are the standard packages that a package of the module shipped to
// Lambda may not import itself: test support, and running programs (a
// Lambda function runs no subprocess; a process credential provider of the
// AWS SDK may, and it is not the module's own import).
var TestOnly = []string{"testing", "testing/...", "net/http/httptest", "os/exec"}

// LambdaMains are the main packages of the Lambda functions, one per
// terraform/deploy.Functions entry.
func LambdaMains() []string {
	out := make([]string, 0, len(deploy.Functions))
	for _, f := range deploy.Functions {
		out = append(out, Module+"/cmd/"+f)
	}
	return out
}

// Rules are the project's walls (package documentation).
func Rules() []Rule {
	return []Rule{
		{
			Name:        "Lambda binaries stay off laptop-only code",
			Roots:       LambdaMains(),
			Deny:        LaptopOnly,
			DenyImports: TestOnly,
			Module:      Module,
		},
		{
			Name:  "query and the ingest function read and append without the projector",
			Roots: []string{Module + "/query", Module + "/cmd/ingest"},
			Deny:  []string{Module + "/projector/..."},
		},
	}
}
