package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDeployCLI(t *testing.T) {
	// Fake terraform binaries (shell scripts answering `terraform version
	// -json`), shared with terraform/deploy's preflight tests.
	fakes, err := filepath.Abs(filepath.Join("..", "..", "terraform", "deploy", "testdata", "terraform"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(fakes, "terraform-1.5.7")
	home := t.TempDir() // no real ~/.aws/credentials
	noCreds := map[string]string{"HOME": home, "TOOLS_DIR": t.TempDir()}
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"no credentials", noCreds, []string{"deploy", "plan", "--stage", "dev", "--terraform", exe}, exitRuntime,
			"deploy: no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run where an IAM role is available and pass --assume-role-available)"},
		{"missing terraform", map[string]string{"HOME": home, "AWS_PROFILE": "p"}, []string{"deploy", "plan", "--stage", "dev", "--terraform", home + "/nope/terraform"}, exitRuntime,
			"terraform not found at \"" + home + "/nope/terraform\": install Terraform >= 1.5.7, < 2.0 (https://developer.hashicorp.com/terraform/install), or build 1.5.7 under .tools/bin with `make tools TOOLS=terraform`, or pass --terraform PATH"},
		{"terraform too old", map[string]string{"HOME": home, "AWS_PROFILE": "p"}, []string{"deploy", "plan", "--stage", "dev", "--terraform", filepath.Join(fakes, "terraform-1.4.6")}, exitRuntime,
			"is 1.4.6, outside >= 1.5.7, < 2.0 (terraform/versions.tf): install Terraform >= 1.5.7, < 2.0 (https://developer.hashicorp.com/terraform/install), or build 1.5.7 under .tools/bin with `make tools TOOLS=terraform`, or pass --terraform PATH"},
		{"terraform 2", map[string]string{"HOME": home, "AWS_PROFILE": "p"}, []string{"deploy", "output", "--stage", "dev", "--terraform", filepath.Join(fakes, "terraform-2.0.0")}, exitRuntime,
			"is 2.0.0, outside >= 1.5.7, < 2.0"},
		{"terraform 1.14 accepted, then no credentials", noCreds, []string{"deploy", "plan", "--stage", "dev", "--terraform", filepath.Join(fakes, "terraform-1.14.0")}, exitRuntime,
			"deploy: no AWS credentials"},
		{"bad stage", noCreds, []string{"deploy", "plan", "--stage", "qa"}, exitUsage, `Stage: "qa" is not dev, stage or prod`},
		{"destroy needs auto-approve", noCreds, []string{"deploy", "destroy", "--stage", "prod"}, exitUsage, "needs --auto-approve"},
		{"unknown subcommand", noCreds, []string{"deploy", "launch"}, exitUsage, `unknown subcommand "launch"`},
		{"no subcommand", noCreds, []string{"deploy"}, exitUsage, `streamfold deploy: expected one of "plan", "apply", "destroy", "output"`},
		{"help", noCreds, []string{"deploy", "-h"}, exitOK, "Exit codes:"},
		{"plan help", noCreds, []string{"deploy", "plan", "-h"}, exitOK, "-backend-lock-table"},
		{"no packages", map[string]string{"HOME": home, "AWS_PROFILE": "p"}, []string{"deploy", "plan", "--stage", "dev", "--terraform", exe, "--dir", home + "/terraform"}, exitRuntime,
			"deploy: Lambda packages missing: run `make package`: " + home + "/dist/projector.zip, " + home + "/dist/archiver.zip, " + home + "/dist/ingest.zip, " + home + "/dist/api.zip, " + home + "/dist/reconcile.zip missing"},
		{"bad --var", noCreds, []string{"deploy", "plan", "--stage", "dev", "--var", "novalue"}, exitUsage, `deploy: --var: want NAME=VALUE, got "novalue"`},
		{"--var stage", noCreds, []string{"deploy", "plan", "--stage", "dev", "--var", "stage=prod"}, exitUsage, `Vars: "stage" cannot be set here (use Stage/Prefix)`},
		{"lock table without bucket", noCreds, []string{"deploy", "plan", "--stage", "dev", "--backend-lock-table", "locks"}, exitUsage, "--backend-lock-table and --backend-key need --backend-bucket"},
		{"key without bucket", noCreds, []string{"deploy", "plan", "--stage", "dev", "--backend-key", "k"}, exitUsage, "--backend-lock-table and --backend-key need --backend-bucket"},
		{"plan help names the key flag", noCreds, []string{"deploy", "plan", "-h"}, exitOK, "-backend-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.env, "", tt.args...)
			stderr += stdout // kong prints --help on standard output
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("stderr lacks %q:\n%s", tt.wantErr, stderr)
			}
		})
	}
}

// TestDeployDryRun: the flags become exactly these terraform commands.
func TestDeployDryRun(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "TOOLS_DIR": t.TempDir(), "AWS_REGION": "eu-west-1"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"S3 backend", []string{"deploy", "plan", "--stage", "prod", "--backend-bucket", "tfstate", "--backend-lock-table", "locks", "--var", "alarm_sns_topic_arn=arn:aws:sns:eu-west-1:1:ops", "--terraform", "tf", "--dry-run"},
			"# remove terraform/backend_override.tf if deploy wrote it\n" +
				"tf -chdir=terraform init -input=false -backend-config=bucket=tfstate -backend-config=dynamodb_table=locks -backend-config=encrypt=true -backend-config=key=streamfold/prod.tfstate -backend-config=region=eu-west-1 -reconfigure\n" +
				"tf -chdir=terraform plan -input=false -var=stage=prod -var=prefix=streamfold -var=alarm_sns_topic_arn=arn:aws:sns:eu-west-1:1:ops -out=prod.tfplan\n"},
		{"own key", []string{"deploy", "apply", "--stage", "stage", "--backend-bucket", "b", "--backend-key", "x/y.tfstate", "--backend-region", "us-east-1", "--terraform", "tf", "--dry-run"},
			"# remove terraform/backend_override.tf if deploy wrote it\n" +
				"tf -chdir=terraform init -input=false -backend-config=bucket=b -backend-config=encrypt=true -backend-config=key=x/y.tfstate -backend-config=region=us-east-1 -reconfigure\n" +
				"tf -chdir=terraform apply -auto-approve -input=false stage.tfplan\n"},
		{"local state", []string{"deploy", "apply", "--stage", "dev", "--auto-approve", "--prefix", "me", "--terraform", "tf", "--dry-run"},
			"# terraform/backend_override.tf\n" +
				"tf -chdir=terraform init -input=false -backend-config=path=dev.tfstate -reconfigure\n" +
				"tf -chdir=terraform apply -auto-approve -input=false -var=stage=dev -var=prefix=me\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, env, "", tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if stdout != tt.want {
				t.Fatalf("dry run printed\n%s\nwant\n%s", stdout, tt.want)
			}
		})
	}
}
