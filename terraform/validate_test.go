package terraform

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"
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

var providerRel = filepath.Join("registry.terraform.io", "hashicorp", "aws")

// providerDirs are the directories that may hold the provider in a
// filesystem-mirror layout (<dir>/registry.terraform.io/hashicorp/aws/...),
// in the order they are searched: STREAMFOLD_TF_PROVIDER_MIRROR,
// TF_PLUGIN_CACHE_DIR, the CLI configuration's plugin_cache_dir and
// filesystem_mirror paths, and Terraform's implied local mirror directories.
func providerDirs(getenv func(string) string, readFile func(string) ([]byte, error)) []string {
	var dirs []string
	add := func(d string) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	add(getenv("STREAMFOLD_TF_PROVIDER_MIRROR"))
	add(getenv("TF_PLUGIN_CACHE_DIR"))
	home := getenv("HOME")
	cliConfig := getenv("TF_CLI_CONFIG_FILE")
	if cliConfig == "" && home != "" {
		cliConfig = filepath.Join(home, ".terraformrc")
	}
	if b, err := readFile(cliConfig); err == nil {
		re := regexp.MustCompile(`(?m)^\s*(?:plugin_cache_dir|path)\s*=\s*"([^"]+)"`)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			add(m[1])
		}
	}
	if home != "" {
		add(filepath.Join(home, ".terraform.d", "plugins"))
		add(filepath.Join(home, ".local", "share", "terraform", "plugins"))
	}
	add("/usr/local/share/terraform/plugins")
	add("/usr/share/terraform/plugins")
	return dirs
}

// findProvider returns the first directory holding a hashicorp/aws version
// within providerConstraint for this platform, unpacked
// (<dir>/registry.terraform.io/hashicorp/aws/6.58.0/linux_amd64/) or packed
// (<dir>/registry.terraform.io/hashicorp/aws/terraform-provider-aws_6.58.0_linux_amd64.zip).
func findProvider(dirs []string, platform string) string {
	allowed := version.MustConstraints(version.NewConstraint(providerConstraint))
	ok := func(v string) bool {
		parsed, err := version.NewVersion(v)
		return err == nil && allowed.Check(parsed)
	}
	packedName := regexp.MustCompile(`^terraform-provider-aws_([0-9][^_]*)_` + regexp.QuoteMeta(platform) + `\.zip$`)
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(d, providerRel))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && ok(e.Name()) {
				if st, err := os.Stat(filepath.Join(d, providerRel, e.Name(), platform)); err == nil && st.IsDir() {
					return d
				}
			}
			if m := packedName.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() && ok(m[1]) {
				return d
			}
		}
	}
	return ""
}

func TestFindProvider(t *testing.T) {
	platform := "linux_arm64"
	root := t.TempDir()
	unpacked := filepath.Join(root, "cache")
	packed := filepath.Join(root, "mirror")
	wrongVersion := filepath.Join(root, "old")
	for _, d := range []string{
		filepath.Join(unpacked, providerRel, "6.58.0", platform),
		filepath.Join(unpacked, providerRel, "6.58.0", "windows_386"),
		filepath.Join(wrongVersion, providerRel, "5.100.0", platform),
		filepath.Join(wrongVersion, providerRel, "6.28.0", platform), // before key_schema on GSIs
		filepath.Join(wrongVersion, providerRel, "7.0.0", platform),
		filepath.Join(packed, providerRel),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(packed, providerRel, "terraform-provider-aws_6.40.1_"+platform+".zip"), []byte("zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(root, "terraformrc")
	if err := os.WriteFile(cliConfig, []byte("provider_installation {\n  filesystem_mirror {\n    path    = \""+packed+"\"\n    include = [\"registry.terraform.io/*/*\"]\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"plugin cache", map[string]string{"TF_PLUGIN_CACHE_DIR": unpacked}, unpacked},
		{"filesystem mirror from the CLI config", map[string]string{"TF_CLI_CONFIG_FILE": cliConfig}, packed},
		{"explicit mirror first", map[string]string{"STREAMFOLD_TF_PROVIDER_MIRROR": packed, "TF_PLUGIN_CACHE_DIR": unpacked}, packed},
		{"only another version", map[string]string{"TF_PLUGIN_CACHE_DIR": wrongVersion, "HOME": root}, ""},
		{"nothing", map[string]string{"HOME": root}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findProvider(providerDirs(env(tt.env), os.ReadFile), platform); got != tt.want {
				t.Fatalf("findProvider = %q, want %q", got, tt.want)
			}
		})
	}
}

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

// copyTree copies the configuration and what it reads (the generated
// Iceberg tables JSON, the named queries, placeholder zips) into a scratch directory laid
// out like the repository, and returns its terraform/ directory.
func copyTree(t *testing.T) string {
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
	for name, b := range readConfigFiles(t) {
		write(filepath.Join(tf, filepath.Base(name)), b)
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

// TestTerraformValidate is the provider tier: `terraform init
// -backend=false` from a local provider, then `terraform validate`. The
// provider cannot be downloaded on these machines, so without a local copy
// the test skips, saying what to install.
func TestTerraformValidate(t *testing.T) {
	bin := terraformBin(t)
	platform := runtime.GOOS + "_" + runtime.GOARCH
	dirs := providerDirs(os.Getenv, os.ReadFile)
	mirror := findProvider(dirs, platform)
	if mirror == "" {
		t.Skipf("hashicorp/aws %s for %s is not available locally (looked in %s); it cannot be downloaded on these machines. "+
			"On a machine with registry access run `terraform providers mirror -platform=%s DIR` in terraform/ and set "+
			"STREAMFOLD_TF_PROVIDER_MIRROR=DIR (or TF_PLUGIN_CACHE_DIR) to run validate here",
			providerConstraint, platform, strings.Join(dirs, ", "), platform)
	}
	dir := copyTree(t)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "validate" {
			t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("init", "-backend=false", "-input=false", "-plugin-dir="+mirror)
	out := run("validate", "-json", "-no-color")
	var res struct {
		Valid       bool `json:"valid"`
		Diagnostics []struct {
			Severity, Summary, Detail string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("validate -json: %v\n%s", err, out)
	}
	for _, d := range res.Diagnostics {
		if d.Severity == "error" {
			t.Errorf("validate: %s: %s", d.Summary, d.Detail)
		} else {
			t.Logf("validate %s: %s: %s", d.Severity, d.Summary, d.Detail)
		}
	}
	if !res.Valid {
		t.Fatal("terraform validate: configuration is not valid")
	}

	t.Run("plan", func(t *testing.T) {
		// The data sources (account, region, partition) call AWS while
		// planning, so a plan needs real credentials and the network: no
		// fake-credentials plan can succeed. Opt in explicitly.
		if os.Getenv("STREAMFOLD_TF_PLAN") != "1" {
			t.Skip("plan needs real AWS credentials and network access (its data sources call STS); set STREAMFOLD_TF_PLAN=1 with credentials to run it")
		}
		run("plan", "-input=false", "-refresh=false", "-lock=false", "-var=stage=dev", "-no-color")
	})
}
