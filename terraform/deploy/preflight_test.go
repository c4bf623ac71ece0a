package deploy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTerraformVersion runs the fake terraform binaries of
// testdata/terraform (shell scripts answering `terraform version -json` as
// each release does) through CheckTerraform, with the real exec.
func TestCheckTerraformVersion(t *testing.T) {
	hint := "install Terraform >= 1.5.7, < 2.0 (https://developer.hashicorp.com/terraform/install), or build 1.5.7 under .tools/bin with `make tools TOOLS=terraform`, or pass --terraform PATH"
	tests := []struct {
		fake    string
		wantErr error
		wantMsg string // "" = no error; else the whole message, with DIR for the testdata directory
	}{
		{"terraform-1.5.7", nil, ""},
		{"terraform-1.9.8", nil, ""},
		{"terraform-1.14.0", nil, ""},
		{"terraform-1.6.0-rc1", nil, ""},
		{"terraform-1.4.6", ErrTerraformVersion,
			`deploy: terraform at "DIR/terraform-1.4.6" is 1.4.6, outside >= 1.5.7, < 2.0 (terraform/versions.tf): ` + hint},
		{"terraform-2.0.0", ErrTerraformVersion,
			`deploy: terraform at "DIR/terraform-2.0.0" is 2.0.0, outside >= 1.5.7, < 2.0 (terraform/versions.tf): ` + hint},
		{"terraform-0.12.31", ErrTerraformVersion,
			`deploy: terraform at "DIR/terraform-0.12.31" is 0.12.31, outside >= 1.5.7, < 2.0 (terraform/versions.tf): ` + hint},
		{"terraform-broken", ErrTerraformVersion,
			`deploy: cannot tell the version of terraform at "DIR/terraform-broken" (` + "`DIR/terraform-broken version -json`" + ` failed: exit status 126): ` + hint},
		{"no-such-terraform", ErrNoTerraform,
			`deploy: terraform not found at "DIR/no-such-terraform": ` + hint},
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "terraform"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			path := filepath.Join(dir, tt.fake)
			err := CheckTerraform(path, OSEnv())
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckTerraform = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("CheckTerraform = %v, want %v", err, tt.wantErr)
			}
			if want := strings.ReplaceAll(tt.wantMsg, "DIR", dir); err.Error() != want {
				t.Fatalf("message\n got %s\nwant %s", err, want)
			}
			var tv *TerraformVersionError
			if errors.Is(err, ErrTerraformVersion) && !errors.As(err, &tv) {
				t.Fatalf("%T is not a *TerraformVersionError", err)
			}
		})
	}
}

// TestCheckTerraformOnPath: a bare name is looked up on PATH and the binary
// found there is the one whose version is checked.
func TestCheckTerraformOnPath(t *testing.T) {
	bin := t.TempDir()
	for name, fake := range map[string]string{"terraform": "terraform-1.4.6", "tf-new": "terraform-1.14.0"} {
		b, err := os.ReadFile(filepath.Join("testdata", "terraform", fake))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := CheckTerraform("tf-new", OSEnv()); err != nil {
		t.Fatalf("tf-new (1.14.0) on PATH: %v", err)
	}
	err := CheckTerraform("terraform", OSEnv())
	if !errors.Is(err, ErrTerraformVersion) || !strings.Contains(err.Error(), `terraform at "terraform" is 1.4.6`) {
		t.Fatalf("terraform (1.4.6) on PATH: %v", err)
	}
}

// TestPreflightTerraformFirst: a terraform outside the range stops Preflight
// before credentials or packages are looked at.
func TestPreflightTerraformFirst(t *testing.T) {
	env := fakeEnv(nil, "/tf")
	env.TerraformVersion = func(string) (string, error) { return "1.3.9", nil }
	err := Preflight(Config{Stage: "dev", WorkingDir: "terraform", TerraformPath: "/tf"}, ActionPlan, env)
	var tv *TerraformVersionError
	if !errors.As(err, &tv) || tv.Version != "1.3.9" || tv.Path != "/tf" {
		t.Fatalf("Preflight = %v, want a *TerraformVersionError for 1.3.9", err)
	}
}

func TestCheckTerraformVersionStrings(t *testing.T) {
	for v, ok := range map[string]bool{
		"1.5.7": true, "v1.5.7": true, "1.5.8": true, "1.6.0": true, "1.9.8": true, "1.14.0": true, "1.99.0": true,
		"1.10.0-beta1": true, "1.5.6": false, "1.0.0": false, "0.15.5": false, "2.0.0": false, "2.0.0-alpha1": false, "": false, "latest": false,
	} {
		if err := CheckTerraformVersion("tf", v); (err == nil) != ok {
			t.Errorf("CheckTerraformVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
	err := CheckTerraformVersion("tf", "latest")
	if !errors.Is(err, ErrTerraformVersion) || !strings.Contains(err.Error(), `unparseable version "latest"`) {
		t.Errorf("unparseable: %v", err)
	}
}
