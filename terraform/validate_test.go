package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"

	"github.com/streamfold/streamfold/schema"
)

// providerConstraint is the hashicorp/aws version range of versions.tf
// ("~> 6.36"), parsed from the file (versions_test.go) so that the two
// cannot disagree.
var providerConstraint = func() string {
	c, err := readVersionConstraints("versions.tf")
	if err != nil {
		panic(fmt.Sprintf("terraform tests: %v", err))
	}
	return c.AWSProvider
}()

func terraformBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TOOLS_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".tools")
	}
	bin, err := filepath.Abs(filepath.Join(dir, "bin", "terraform"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("terraform binary not found at %s (make tools): %v", bin, err)
		if os.Getenv("STREAMFOLD_REQUIRE_SERVICES") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// copyTreeFiles copies the configuration files ("terraform/<name>.tf" ->
// text; "terraform/generated/<name>" replaces a generated file) and what
// they read (the generated DynamoDB and Iceberg tables JSON, the named
// queries, placeholder zips) into a scratch directory laid out like the
// repository, and returns its terraform/ directory.
func copyTreeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	tf := filepath.Join(root, "terraform")
	write := func(path string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		write(filepath.Join(tf, filepath.FromSlash(strings.TrimPrefix(name, "terraform/"))), b)
	}
	if _, set := files[dynamoDBFileKey]; !set {
		b, err := os.ReadFile(generatedDynamoDB)
		if err != nil {
			t.Fatalf("%v (run %s)", err, schema.TerraformTablesGenerator)
		}
		write(filepath.Join(tf, generatedDynamoDB), b)
	}
	tables, err := os.ReadFile(tablesSourcePath())
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(tf, generatedTables), tables)
	sqls, _ := filepath.Glob("../archiver/queries/*.sql")
	for _, q := range sqls {
		b, err := os.ReadFile(q)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(root, "archiver", "queries", filepath.Base(q)), b)
	}
	for _, fn := range lambdaCommands {
		write(filepath.Join(root, "dist", fn+".zip"), []byte("placeholder"))
	}
	return tf
}

// TestProviderPinInRange: the hashicorp/aws release .ci/tools.sh builds is
// inside versions.tf's range, so the plan tier plans with a provider users
// may run.
func TestProviderPinInRange(t *testing.T) {
	b, err := os.ReadFile("../.ci/tools.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^AWS_PROVIDER_VERSION="([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`.ci/tools.sh: no AWS_PROVIDER_VERSION="..." line`)
	}
	v, err := version.NewVersion(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	c := version.MustConstraints(version.NewConstraint(providerConstraint))
	if !c.Check(v) {
		t.Fatalf(".ci/tools.sh builds hashicorp/aws %s, outside versions.tf's %q", v, providerConstraint)
	}
}
