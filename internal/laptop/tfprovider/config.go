package tfprovider

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// configSchema is the part of a Terraform module Trim needs: the blocks that
// name a provider type.
var configSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "resource", LabelNames: []string{"type", "name"}},
		{Type: "data", LabelNames: []string{"type", "name"}},
		{Type: "ephemeral", LabelNames: []string{"type", "name"}},
	},
}

// ConfigTypes returns the aws_* resource, data source and ephemeral resource
// types that the Terraform files (*.tf) in dir declare, sorted and unique.
func ConfigTypes(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("tfprovider: no *.tf files in %s", dir)
	}
	sort.Strings(files)
	p := hclparse.NewParser()
	seen := map[string]bool{}
	for _, file := range files {
		f, diags := p.ParseHCLFile(file)
		if diags.HasErrors() {
			return nil, fmt.Errorf("tfprovider: %s", diags.Error())
		}
		content, _, diags := f.Body.PartialContent(configSchema)
		if diags.HasErrors() {
			return nil, fmt.Errorf("tfprovider: %s", diags.Error())
		}
		for _, b := range content.Blocks {
			if t := b.Labels[0]; strings.HasPrefix(t, "aws_") {
				seen[t] = true
			}
		}
	}
	var out []string
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}
