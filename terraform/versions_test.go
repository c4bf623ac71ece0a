package terraform

import (
	"fmt"
	"strings"
	"testing"

	version "github.com/hashicorp/go-version"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/streamfold/streamfold/terraform/deploy"
	"github.com/zclconf/go-cty/cty"
)

// versionConstraints are the version constraints of versions.tf's
// terraform block.
type versionConstraints struct {
	Terraform   string // required_version
	AWSProvider string // required_providers.aws.version
	AWSSource   string // required_providers.aws.source
}

// readVersionConstraints parses path with hcl/v2 and returns its terraform
// block's constraints; a missing block or attribute is an error naming it.
func readVersionConstraints(path string) (versionConstraints, error) {
	var c versionConstraints
	f, diags := hclparse.NewParser().ParseHCLFile(path)
	if diags.HasErrors() {
		return c, fmt.Errorf("%s: %s", path, diags.Error())
	}
	content, _, diags := f.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "terraform"}}})
	if diags.HasErrors() || len(content.Blocks) != 1 {
		return c, fmt.Errorf("%s: want exactly one terraform block (%s)", path, diags.Error())
	}
	tf, _, diags := content.Blocks[0].Body.PartialContent(&hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "required_version", Required: true}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "required_providers"}},
	})
	if diags.HasErrors() {
		return c, fmt.Errorf("%s: terraform block: %s", path, diags.Error())
	}
	v, diags := tf.Attributes["required_version"].Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String {
		return c, fmt.Errorf("%s: terraform.required_version: want a string", path)
	}
	c.Terraform = v.AsString()
	if len(tf.Blocks) != 1 {
		return c, fmt.Errorf("%s: terraform: want one required_providers block, got %d", path, len(tf.Blocks))
	}
	attrs, diags := tf.Blocks[0].Body.JustAttributes()
	if diags.HasErrors() || attrs["aws"] == nil {
		return c, fmt.Errorf("%s: terraform.required_providers.aws missing", path)
	}
	aws, diags := attrs["aws"].Expr.Value(nil)
	if diags.HasErrors() || !aws.Type().IsObjectType() {
		return c, fmt.Errorf("%s: terraform.required_providers.aws: want an object", path)
	}
	for name, dst := range map[string]*string{"version": &c.AWSProvider, "source": &c.AWSSource} {
		if !aws.Type().HasAttribute(name) || aws.GetAttr(name).Type() != cty.String {
			return c, fmt.Errorf("%s: terraform.required_providers.aws.%s: want a string", path, name)
		}
		*dst = aws.GetAttr(name).AsString()
	}
	return c, nil
}

// isRange reports whether a constraint string admits more than one version:
// no part of it is an exact pin ("= 1.5.7", "1.5.7") and, unless it is a
// "~>" range, it has a lower and an upper bound or only a lower one.
func isRange(constraint string) bool {
	for _, part := range strings.Split(constraint, ",") {
		p := strings.TrimSpace(part)
		if p == "" || strings.HasPrefix(p, "=") || strings.HasPrefix(p, "!=") || (p[0] >= '0' && p[0] <= '9') || strings.HasPrefix(p, "v") {
			return false
		}
	}
	return true
}

// TestVersionConstraints: versions.tf states ranges, not pins, that admit
// the Terraform the project builds (1.5.7) and what users run (1.6-1.14),
// and an AWS provider range that has multi-attribute GSI keys (key_schema,
// 6.29.0) and the key_schema GSI-removal fix (6.36.0), within major 6.
func TestVersionConstraints(t *testing.T) {
	c, err := readVersionConstraints("versions.tf")
	if err != nil {
		t.Fatal(err)
	}
	if c.Terraform != deploy.TerraformConstraint {
		t.Errorf("required_version %q != deploy.TerraformConstraint %q (streamfold deploy's preflight): keep them equal", c.Terraform, deploy.TerraformConstraint)
	}
	if c.AWSSource != "hashicorp/aws" {
		t.Errorf("required_providers.aws.source = %q, want hashicorp/aws", c.AWSSource)
	}
	tests := []struct {
		what       string
		constraint string
		allow      []string
		refuse     []string
	}{
		{"required_version", c.Terraform,
			[]string{"1.5.7", deploy.MinTerraformVersion, "1.6.6", "1.9.8", "1.10.5", "1.14.0", "1.99.0"},
			[]string{"1.5.6", "1.4.6", "1.0.0", "0.15.5", "2.0.0", "3.1.0"}},
		{"required_providers.aws.version", c.AWSProvider,
			[]string{"6.36.0", "6.41.0", "6.58.0", "6.99.1"},
			[]string{"6.28.0", "6.29.0", "6.35.9", "5.100.0", "7.0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			if !isRange(tt.constraint) {
				t.Fatalf("%s = %q is a pin; want a range (users run other versions)", tt.what, tt.constraint)
			}
			cs, err := version.NewConstraint(tt.constraint)
			if err != nil {
				t.Fatalf("%s = %q: %v", tt.what, tt.constraint, err)
			}
			for _, v := range tt.allow {
				if !cs.Check(version.Must(version.NewVersion(v))) {
					t.Errorf("%s = %q refuses %s", tt.what, tt.constraint, v)
				}
			}
			for _, v := range tt.refuse {
				if cs.Check(version.Must(version.NewVersion(v))) {
					t.Errorf("%s = %q accepts %s", tt.what, tt.constraint, v)
				}
			}
		})
	}
	if !strings.HasPrefix(strings.TrimSpace(c.AWSProvider), "~>") {
		t.Errorf("required_providers.aws.version = %q: want a ~> range", c.AWSProvider)
	}
}

func TestIsRange(t *testing.T) {
	for c, want := range map[string]bool{
		">= 1.5.7, < 2.0": true, "~> 6.36": true, ">= 1.5": true,
		"= 1.5.7": false, "1.5.7": false, "v1.5.7": false, ">= 1.5, = 1.5.7": false, "": false, "!= 1.6.0": false,
	} {
		if got := isRange(c); got != want {
			t.Errorf("isRange(%q) = %v, want %v", c, got, want)
		}
	}
}
