package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/streamfold/streamfold/toolkit"
)

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"bad stage", Options{Action: "plan", Stage: "qa"}, `deploy: Options.Config: Stage: "qa" is not dev, stage or prod`},
		{"destroy needs auto-approve", Options{Action: "destroy", Stage: "prod"}, "deploy: Options.Config: AutoApprove: destroy of stage prod needs --auto-approve"},
		{"var without value", Options{Action: "plan", Stage: "dev", Vars: []string{"novalue"}}, `deploy: Options.Vars: want NAME=VALUE, got "novalue"`},
		{"var twice", Options{Action: "plan", Stage: "dev", Vars: []string{"a=1", "a=2"}}, "deploy: Options.Vars: a given twice"},
		{"var stage", Options{Action: "plan", Stage: "dev", Vars: []string{"stage=prod"}}, `deploy: Options.Config: Vars: "stage" cannot be set here (use Stage/Prefix)`},
		{"lock table without bucket", Options{Action: "plan", Stage: "dev", Backend: Backend{LockTable: "l"}}, "deploy: Options.Backend: LockTable and Key need Bucket"},
		{"offline apply", Options{Action: "apply", Stage: "dev", Offline: true}, "deploy: Options.Offline: is for plan only"},
		{"offline with a backend", Options{Action: "plan", Stage: "dev", Offline: true, Backend: Backend{Bucket: "b"}}, "deploy: Options.Offline: is for plan only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, toolkit.ErrInvalidOptions) {
				t.Fatalf("error %v, want %q (invalid options)", err, tt.want)
			}
			if _, err := Run(context.Background(), tt.o, nil, nil); err == nil || err.Error() != tt.o.Validate().Error() {
				t.Fatalf("Run: %v, want the Validate error", err)
			}
		})
	}
}

// TestCommands: the options become exactly these terraform commands.
func TestCommands(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want []string
	}{
		{"S3 backend", Options{Action: "plan", Stage: "prod", Terraform: "tf", Backend: Backend{Bucket: "tfstate", LockTable: "locks", Region: "eu-west-1"}, Vars: []string{"alarm_sns_topic_arn=arn:aws:sns:eu-west-1:1:ops"}}, []string{
			"# remove terraform/backend_override.tf if deploy wrote it",
			"tf -chdir=terraform init -input=false -backend-config=bucket=tfstate -backend-config=dynamodb_table=locks -backend-config=encrypt=true -backend-config=key=streamfold/prod.tfstate -backend-config=region=eu-west-1 -reconfigure",
			"tf -chdir=terraform plan -input=false -var=stage=prod -var=prefix=streamfold -var=alarm_sns_topic_arn=arn:aws:sns:eu-west-1:1:ops -out=prod.tfplan"}},
		{"local state", Options{Action: "apply", Stage: "dev", Prefix: "me", AutoApprove: true, Terraform: "tf"}, []string{
			"# terraform/backend_override.tf",
			"tf -chdir=terraform init -input=false -backend-config=path=dev.tfstate -reconfigure",
			"tf -chdir=terraform apply -auto-approve -input=false -var=stage=dev -var=prefix=me"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.DryRun = true
			res, err := Run(context.Background(), tt.o, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(res.Commands, "\n"); got != strings.Join(tt.want, "\n") {
				t.Fatalf("commands\n%s\nwant\n%s", got, strings.Join(tt.want, "\n"))
			}
			var b bytes.Buffer
			if err := res.WriteText(&b); err != nil || b.String() != strings.Join(tt.want, "\n")+"\n" {
				t.Fatalf("text %q, %v", b.String(), err)
			}
		})
	}
}

func TestResultText(t *testing.T) {
	res := &Result{Outputs: map[string]tfexec.OutputMeta{"b": {Value: json.RawMessage(`"x"`)}, "a": {Value: json.RawMessage(` 1 `)}, "s": {Sensitive: true, Value: json.RawMessage(`"k"`)}}}
	var b bytes.Buffer
	if err := res.WriteText(&b); err != nil || b.String() != "a = 1\nb = \"x\"\ns = (sensitive)\n" {
		t.Fatalf("outputs text %q, %v", b.String(), err)
	}
	off := &OfflineSummary{Stage: "dev", Account: "1", Region: "r", ResourcesToCreate: 3, Creates: map[string]int{"b": 1, "a": 2}, AWSCalls: []string{"sts:GetCallerIdentity"}, PlaceholderPackages: []string{}}
	b.Reset()
	res = &Result{Offline: off}
	if err := res.WriteText(&b); err != nil || b.String() != "\nOffline plan for stage dev: 3 resources to create\n     2  a\n     1  b\nAWS calls: 1, all sts:GetCallerIdentity answered locally (account 1, region r)\n" {
		t.Fatalf("offline text %q, %v", b.String(), err)
	}
	js, _ := json.Marshal(res.JSON())
	if string(js) != `{"account":"1","aws_calls":["sts:GetCallerIdentity"],"creates":{"a":2,"b":1},"placeholder_packages":[],"prefix":"","region":"r","resources_to_create":3,"stage":"dev"}` {
		t.Fatalf("offline JSON %s", js)
	}
}
