package deploy

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	tfdeploy "github.com/streamfold/streamfold/terraform/deploy"
)

// OfflineSummary is what an offline plan would create (its JSON fields are
// in name order, as the CLI has always printed them).
type OfflineSummary struct {
	Account             string         `json:"account"`
	AWSCalls            []string       `json:"aws_calls"`
	Creates             map[string]int `json:"creates"`
	PlaceholderPackages []string       `json:"placeholder_packages"`
	Prefix              string         `json:"prefix"`
	Region              string         `json:"region"`
	ResourcesToCreate   int            `json:"resources_to_create"`
	Stage               string         `json:"stage"`
}

// offline runs tfdeploy.OfflinePlan and sums it up.
func offline(ctx context.Context, o Options, cfg tfdeploy.Config, stdout, stderr io.Writer) (*OfflineSummary, error) {
	if err := tfdeploy.CheckTerraform(cfg.TerraformPath, tfdeploy.OSEnv()); err != nil {
		return nil, err
	}
	opts := tfdeploy.OfflineOptions{Config: cfg, CLIConfigFile: o.CLIConfigFile, Stdout: stdout, Stderr: stderr}
	rc := filepath.Join(o.toolsDir(), "terraform.rc")
	if st, err := os.Stat(rc); err == nil && st.Mode().IsRegular() {
		opts.CLIConfigFile = rc
	}
	fmt.Fprintf(stderr, "streamfold: deploy plan --offline: stage %s, provider from %s; no AWS account is used\n",
		cfg.Stage, cmp.Or(opts.CLIConfigFile, "the Terraform registry"))
	res, err := tfdeploy.OfflinePlan(ctx, opts)
	if res != nil && res.Validate != nil {
		for _, d := range res.Validate.Diagnostics {
			where := ""
			if d.Range != nil {
				where = fmt.Sprintf(" (%s:%d)", filepath.Base(d.Range.Filename), d.Range.Start.Line)
			}
			fmt.Fprintf(stderr, "validate %s: %s%s: %s\n", d.Severity, d.Summary, where, d.Detail)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("deploy plan --offline: %w", err)
	}
	sum := &OfflineSummary{
		Account: tfdeploy.OfflineAccount, Region: tfdeploy.OfflineRegion, Stage: cfg.Stage, Prefix: cfg.Prefix,
		Creates: res.Creates(), AWSCalls: []string{}, PlaceholderPackages: []string{},
	}
	for _, n := range sum.Creates {
		sum.ResourcesToCreate += n
	}
	for _, c := range res.Calls {
		sum.AWSCalls = append(sum.AWSCalls, c.Service+":"+c.Action)
	}
	sum.PlaceholderPackages = append(sum.PlaceholderPackages, res.Placeholders...)
	return sum, nil
}

// WriteText prints the count of resources to create by type, the AWS calls
// and the placeholders.
func (s *OfflineSummary) WriteText(w io.Writer) error {
	types := make([]string, 0, len(s.Creates))
	for t := range s.Creates {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintf(w, "\nOffline plan for stage %s: %d resources to create\n", s.Stage, s.ResourcesToCreate)
	for _, t := range types {
		fmt.Fprintf(w, "  %4d  %s\n", s.Creates[t], t)
	}
	fmt.Fprintf(w, "AWS calls: %d, all sts:GetCallerIdentity answered locally (account %s, region %s)\n", len(s.AWSCalls), s.Account, s.Region)
	if len(s.PlaceholderPackages) > 0 {
		fmt.Fprintf(w, "Planned from placeholders (run make package for the real hashes): %s\n", strings.Join(s.PlaceholderPackages, ", "))
	}
	return nil
}
