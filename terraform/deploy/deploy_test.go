package deploy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func cfgFor(stage string, mod func(*Config)) Config {
	c := Config{Stage: stage, TerraformPath: "terraform", BackendConfig: map[string]string{"bucket": "tfstate", "region": "eu-west-1", "dynamodb_table": "tf-locks"}}
	if mod != nil {
		mod(&c)
	}
	c.SetDefaults()
	return c
}

func TestArgs(t *testing.T) {
	for _, stage := range []string{"dev", "stage", "prod"} {
		vars := []string{"-var=stage=" + stage, "-var=prefix=streamfold"}
		tests := []struct {
			name   string
			mod    func(*Config)
			action string
			want   []string
		}{
			{"init", nil, ActionInit, []string{"init", "-input=false", "-backend-config=bucket=tfstate", "-backend-config=dynamodb_table=tf-locks", "-backend-config=encrypt=true", "-backend-config=key=streamfold/" + stage + ".tfstate", "-backend-config=region=eu-west-1", "-reconfigure"}},
			{"init own key, no encryption", func(c *Config) { c.BackendConfig["key"] = "k"; c.BackendConfig["encrypt"] = "false" }, ActionInit,
				[]string{"init", "-input=false", "-backend-config=bucket=tfstate", "-backend-config=dynamodb_table=tf-locks", "-backend-config=encrypt=false", "-backend-config=key=k", "-backend-config=region=eu-west-1", "-reconfigure"}},
			{"plan", nil, ActionPlan, append(append([]string{"plan", "-input=false"}, vars...), "-out="+stage+".tfplan")},
			{"plan var file and vars", func(c *Config) { c.VarFile = "x.tfvars"; c.Vars = map[string]string{"z": "1", "a": "2"} }, ActionPlan,
				append(append([]string{"plan", "-input=false", "-var-file=x.tfvars"}, vars...), "-var=a=2", "-var=z=1", "-out="+stage+".tfplan")},
			{"apply saved plan", nil, ActionApply, []string{"apply", "-input=false", stage + ".tfplan"}},
			{"apply auto", func(c *Config) { c.AutoApprove = true }, ActionApply, append([]string{"apply", "-input=false"}, vars...)},
			{"destroy", func(c *Config) { c.AutoApprove = true }, ActionDestroy, append([]string{"destroy", "-input=false"}, vars...)},
			{"output", nil, ActionOutput, []string{"output", "-json"}},
			{"local init", func(c *Config) { c.BackendConfig = nil }, ActionInit, []string{"init", "-input=false", "-backend-config=path=" + stage + ".tfstate", "-reconfigure"}},
			{"local plan", func(c *Config) { c.BackendConfig = nil }, ActionPlan, append(append([]string{"plan", "-input=false"}, vars...), "-out="+stage+".tfplan")},
			{"local apply", func(c *Config) { c.BackendConfig = nil }, ActionApply, []string{"apply", "-input=false", stage + ".tfplan"}},
			{"local output", func(c *Config) { c.BackendConfig = nil }, ActionOutput, []string{"output", "-json"}},
		}
		for _, tt := range tests {
			t.Run(stage+"/"+tt.name, func(t *testing.T) {
				got := Args(cfgFor(stage, tt.mod), tt.action)
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("Args\n got %q\nwant %q", got, tt.want)
				}
			})
		}
	}
}

func TestArgsOptionCounts(t *testing.T) {
	c := cfgFor("dev", func(c *Config) { c.VarFile = "x.tfvars"; c.Vars = map[string]string{"a": "1"} })
	if n := len(InitOptions(c)); n != 6 { // 5 backend + reconfigure
		t.Errorf("InitOptions: %d options", n)
	}
	if n := len(PlanOptions(c)); n != 5 { // var-file, 3 vars, out
		t.Errorf("PlanOptions: %d options", n)
	}
	if n := len(ApplyOptions(c)); n != 1 { // saved plan
		t.Errorf("ApplyOptions: %d options", n)
	}
	c.AutoApprove = true
	if n := len(ApplyOptions(c)); n != 4 {
		t.Errorf("ApplyOptions auto: %d options", n)
	}
	if n := len(DestroyOptions(c)); n != 4 {
		t.Errorf("DestroyOptions: %d options", n)
	}
	if n := len(OutputOptions(c)); n != 0 {
		t.Errorf("OutputOptions: %d options", n)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"ok", nil, ""},
		{"bad stage", func(c *Config) { c.Stage = "qa" }, `Stage: "qa" is not dev, stage or prod`},
		{"bad prefix", func(c *Config) { c.Prefix = "Bad_Prefix" }, `Prefix: "Bad_Prefix" must be 1-63 lowercase letters, digits or '-'`},
		{"no terraform", func(c *Config) { c.TerraformPath = "" }, "TerraformPath: empty"},
		{"backend without bucket", func(c *Config) { c.BackendConfig = map[string]string{"region": "x"} }, "BackendConfig: bucket is required when any backend setting is given"},
		{"stage var", func(c *Config) { c.Vars = map[string]string{"stage": "prod"} }, `Vars: "stage" cannot be set here (use Stage/Prefix)`},
		{"bad var name", func(c *Config) { c.Vars = map[string]string{"a b": "1"} }, `Vars: "a b" is not a Terraform variable name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfgFor("dev", tt.mod)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
	c := cfgFor("prod", nil)
	if err := c.ValidateAction(ActionDestroy); err == nil || err.Error() != "AutoApprove: destroy of stage prod needs --auto-approve" {
		t.Fatalf("ValidateAction(destroy) = %v", err)
	}
	if err := c.ValidateAction("nuke"); err == nil || !strings.HasPrefix(err.Error(), "action:") {
		t.Fatalf("ValidateAction(nuke) = %v", err)
	}
}

func fakeEnv(vars map[string]string, files ...string) Env {
	return Env{
		Getenv: func(k string) string { return vars[k] },
		FileExists: func(p string) bool {
			for _, f := range files {
				if f == p {
					return true
				}
			}
			return false
		},
		LookPath:         func(string) (string, error) { return "", errors.New("not found") },
		TerraformVersion: func(string) (string, error) { return MinTerraformVersion, nil },
	}
}

func TestPreflight(t *testing.T) {
	const tf = "/tools/bin/terraform"
	tests := []struct {
		name    string
		tfPath  string
		env     Env
		wantErr error
		wantMsg string
	}{
		{"missing terraform", tf, fakeEnv(map[string]string{"AWS_PROFILE": "p"}), ErrNoTerraform,
			"deploy: terraform not found at \"/tools/bin/terraform\": " + terraformInstallHint},
		{"missing terraform on PATH", "terraform", fakeEnv(map[string]string{"AWS_PROFILE": "p"}), ErrNoTerraform,
			"deploy: terraform not found at \"terraform\": " + terraformInstallHint},
		{"missing credentials", tf, fakeEnv(map[string]string{"HOME": "/home/u"}, tf), ErrNoCredentials,
			"deploy: no AWS credentials: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or run where an IAM role is available and pass --assume-role-available)"},
		{"key id without secret", tf, fakeEnv(map[string]string{"AWS_ACCESS_KEY_ID": "k"}, tf), ErrNoCredentials, ""},
		{"shared file named but absent", tf, fakeEnv(map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "/c"}, tf), ErrNoCredentials, ""},
		{"profile", tf, fakeEnv(map[string]string{"AWS_PROFILE": "p"}, tf), nil, ""},
		{"static keys", tf, fakeEnv(map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}, tf), nil, ""},
		{"web identity", tf, fakeEnv(map[string]string{"AWS_WEB_IDENTITY_TOKEN_FILE": "/t"}, tf), nil, ""},
		{"container", tf, fakeEnv(map[string]string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/x"}, tf), nil, ""},
		{"home credentials file", tf, fakeEnv(map[string]string{"HOME": "/home/u"}, tf, "/home/u/.aws/credentials"), nil, ""},
		{"shared credentials file", tf, fakeEnv(map[string]string{"AWS_SHARED_CREDENTIALS_FILE": "/c"}, tf, "/c"), nil, ""},
		{"assume role", tf, func() Env { e := fakeEnv(nil, tf); e.AssumeRoleAvailable = true; return e }(), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Preflight(Config{TerraformPath: tt.tfPath}, ActionOutput, tt.env)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Preflight() = %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Fatalf("message\n got %s\nwant %s", err, tt.wantMsg)
			}
		})
	}
}
