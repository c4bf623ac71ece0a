package lambdatier

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// tfFunction is what terraform/lambda.tf gives one function.
type tfFunction struct {
	// Env is its environment, each value evaluated (see tfValues).
	Env map[string]string
	// Timeout is var.lambda_timeout_seconds[name] (its default), seconds.
	Timeout int
	// Memory is var.lambda_memory_mb[name] (its default), MB.
	Memory int
}

// tfValues stands in for what Terraform knows only when it applies: the
// variables the test sets (prefix, stage) and the attributes of resources
// the environment refers to. A reference the tier does not know fails the
// test, naming it: a variable added to a function's environment must be
// given a local value here, so that the tier runs the function with it.
type tfValues struct {
	Vars      map[string]string
	Bucket    string            // aws_s3_bucket.archive.bucket
	Database  string            // aws_glue_catalog_database.archive.name
	Secret    map[string]string // aws_secretsmanager_secret.<name>.arn, by name
	AccountID string            // data.aws_caller_identity.current.account_id
}

// data returns the value of data.<typ>.<name>.<attr>.
func (v tfValues) data(typ, name, attr string) (string, error) {
	if typ == "aws_caller_identity" && name == "current" && attr == "account_id" && v.AccountID != "" {
		return v.AccountID, nil
	}
	return "", fmt.Errorf("data.%s.%s.%s: the Lambda tier has no local value for it (add one to tfValues.data in internal/laptop/lambdatier)", typ, name, attr)
}

// resource returns the value of <typ>.<name>.<attr>.
func (v tfValues) resource(typ, name, attr string) (string, error) {
	switch {
	case typ == "aws_s3_bucket" && name == "archive" && attr == "bucket":
		return v.Bucket, nil
	case typ == "aws_glue_catalog_database" && name == "archive" && attr == "name" && v.Database != "":
		return v.Database, nil
	case typ == "aws_secretsmanager_secret" && attr == "arn" && v.Secret[name] != "":
		return v.Secret[name], nil
	}
	return "", fmt.Errorf("%s.%s.%s: the Lambda tier has no local value for it (add one to tfValues.resource in internal/laptop/lambdatier)", typ, name, attr)
}

// readTerraform reads every function's environment, timeout and memory from
// terraform/lambda.tf and terraform/variables.tf.
func readTerraform(t *testing.T, vals tfValues) map[string]tfFunction {
	t.Helper()
	fns, err := parseTerraform(filepath.Join(repoRoot(t), "terraform"), vals)
	if err != nil {
		t.Fatalf("terraform: %v", err)
	}
	return fns
}

func parseTerraform(dir string, vals tfValues) (map[string]tfFunction, error) {
	parse := func(name string) (*hclsyntax.Body, error) {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.Pos{Line: 1, Column: 1})
		if diags.HasErrors() {
			return nil, diags
		}
		return f.Body.(*hclsyntax.Body), nil
	}
	varsBody, err := parse("variables.tf")
	if err != nil {
		return nil, err
	}
	vars := map[string]cty.Value{}
	for _, b := range varsBody.Blocks {
		if b.Type != "variable" || len(b.Labels) != 1 {
			continue
		}
		if a, ok := b.Body.Attributes["default"]; ok {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return nil, fmt.Errorf("variables.tf: variable %q: default: %v", b.Labels[0], diags)
			}
			vars[b.Labels[0]] = v
		}
	}
	for k, v := range vals.Vars {
		vars[k] = cty.StringVal(v)
	}
	lambdaBody, err := parse("lambda.tf")
	if err != nil {
		return nil, err
	}
	var functions *hclsyntax.ObjectConsExpr
	for _, b := range lambdaBody.Blocks {
		if a, ok := b.Body.Attributes["functions"]; ok && b.Type == "locals" {
			if o, ok := a.Expr.(*hclsyntax.ObjectConsExpr); ok {
				functions = o
			}
		}
	}
	if functions == nil {
		return nil, fmt.Errorf("lambda.tf: no `functions = { ... }` in a locals block")
	}
	varObj := cty.ObjectVal(vars)
	out := map[string]tfFunction{}
	for _, item := range functions.Items {
		name, err := keyOf(item.KeyExpr)
		if err != nil {
			return nil, fmt.Errorf("lambda.tf: local.functions: %w", err)
		}
		fn := tfFunction{Env: map[string]string{}}
		body, ok := item.ValueExpr.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil, fmt.Errorf("lambda.tf: local.functions.%s: not an object", name)
		}
		for _, it := range body.Items {
			k, err := keyOf(it.KeyExpr)
			if err != nil {
				return nil, fmt.Errorf("lambda.tf: local.functions.%s: %w", name, err)
			}
			if k != "environment" {
				continue
			}
			env, err := environmentObject(it.ValueExpr, vars)
			if err != nil {
				return nil, fmt.Errorf("lambda.tf: local.functions.%s.environment: %w", name, err)
			}
			for _, e := range env.Items {
				k, err := keyOf(e.KeyExpr)
				if err != nil {
					return nil, fmt.Errorf("lambda.tf: local.functions.%s.environment: %w", name, err)
				}
				v, err := evalString(e.ValueExpr, varObj, vals)
				if err != nil {
					return nil, fmt.Errorf("lambda.tf: local.functions.%s.environment.%s: %w", name, k, err)
				}
				fn.Env[k] = v
			}
		}
		for _, x := range []struct {
			v    string
			into *int
		}{{"lambda_timeout_seconds", &fn.Timeout}, {"lambda_memory_mb", &fn.Memory}} {
			m, ok := vars[x.v]
			if !ok || !m.CanIterateElements() || !m.Type().IsObjectType() && !m.Type().IsMapType() {
				return nil, fmt.Errorf("variables.tf: var.%s: no default map", x.v)
			}
			mv := m.AsValueMap()[name]
			if mv == cty.NilVal || mv.IsNull() || mv.Type() != cty.Number {
				return nil, fmt.Errorf("variables.tf: var.%s: no number for %q", x.v, name)
			}
			f, _ := mv.AsBigFloat().Int64()
			*x.into = int(f)
		}
		out[name] = fn
	}
	return out, nil
}

// environmentObject is a function's environment object: the object
// itself, or the first argument of merge(object, local.gsi_shards_env),
// whose second part Terraform fills only when var.gsi_shards turns write
// sharding on; the tier runs the default (off), so it must be off there.
func environmentObject(e hclsyntax.Expression, vars map[string]cty.Value) (*hclsyntax.ObjectConsExpr, error) {
	if o, ok := e.(*hclsyntax.ObjectConsExpr); ok {
		return o, nil
	}
	call, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "merge" || len(call.Args) != 2 {
		return nil, fmt.Errorf("not an object, nor merge(object, local.gsi_shards_env)")
	}
	o, ok := call.Args[0].(*hclsyntax.ObjectConsExpr)
	ref, isRef := call.Args[1].(*hclsyntax.ScopeTraversalExpr)
	if !ok || !isRef || ref.Traversal.RootName() != "local" || len(ref.Traversal) != 2 {
		return nil, fmt.Errorf("not merge(object, local.gsi_shards_env)")
	}
	if a, ok := ref.Traversal[1].(hcl.TraverseAttr); !ok || a.Name != "gsi_shards_env" {
		return nil, fmt.Errorf("merges an unknown local: only local.gsi_shards_env is understood")
	}
	if v, ok := vars["gsi_shards"]; ok && v.Type() == cty.Number {
		if n, _ := v.AsBigFloat().Int64(); n > 1 {
			return nil, fmt.Errorf("var.gsi_shards defaults to %d: the tier runs with write sharding off", n)
		}
	}
	return o, nil
}

func keyOf(e hclsyntax.Expression) (string, error) {
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.Type() != cty.String {
		return "", fmt.Errorf("a key that is not a plain name at %s", e.Range())
	}
	return v.AsString(), nil
}

// evalString evaluates one environment value with var.* and the resource
// attributes of vals.
func evalString(e hclsyntax.Expression, vars cty.Value, vals tfValues) (string, error) {
	res := map[string]map[string]map[string]cty.Value{}
	for _, tr := range e.Variables() {
		root := tr.RootName()
		if root == "var" || root == "local" {
			continue
		}
		if root == "data" && len(tr) == 4 {
			typ, ok1 := tr[1].(hcl.TraverseAttr)
			name, ok2 := tr[2].(hcl.TraverseAttr)
			attr, ok3 := tr[3].(hcl.TraverseAttr)
			if !ok1 || !ok2 || !ok3 {
				return "", fmt.Errorf("reference at %s: the Lambda tier understands only data.<type>.<name>.<attribute>", e.Range())
			}
			v, err := vals.data(typ.Name, name.Name, attr.Name)
			if err != nil {
				return "", err
			}
			if res["data"] == nil {
				res["data"] = map[string]map[string]cty.Value{}
			}
			if res["data"][typ.Name] == nil {
				res["data"][typ.Name] = map[string]cty.Value{}
			}
			res["data"][typ.Name][name.Name] = cty.ObjectVal(map[string]cty.Value{attr.Name: cty.StringVal(v)})
			continue
		}
		if len(tr) < 3 {
			return "", fmt.Errorf("reference at %s: the Lambda tier understands only var.<name> and <type>.<name>.<attribute>", e.Range())
		}
		name, ok1 := tr[1].(hcl.TraverseAttr)
		attr, ok2 := tr[2].(hcl.TraverseAttr)
		if !ok1 || !ok2 {
			return "", fmt.Errorf("reference at %s: the Lambda tier understands only <type>.<name>.<attribute>", e.Range())
		}
		v, err := vals.resource(root, name.Name, attr.Name)
		if err != nil {
			return "", err
		}
		if res[root] == nil {
			res[root] = map[string]map[string]cty.Value{}
		}
		if res[root][name.Name] == nil {
			res[root][name.Name] = map[string]cty.Value{}
		}
		res[root][name.Name][attr.Name] = cty.StringVal(v)
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": vars}}
	for typ, byName := range res {
		names := map[string]cty.Value{}
		for n, attrs := range byName {
			names[n] = cty.ObjectVal(attrs)
		}
		ctx.Variables[typ] = cty.ObjectVal(names)
	}
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		return "", diags
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil || s.IsNull() || !s.IsKnown() {
		return "", fmt.Errorf("not a string: %s", v.GoString())
	}
	return s.AsString(), nil
}

// TestReadTerraform checks the reader on the real configuration: every
// function, each with the variables it is given, and a reference the tier
// cannot supply is an error naming it.
func TestReadTerraform(t *testing.T) {
	vals := tfValues{
		Vars:      map[string]string{"prefix": "p", "stage": "stage"},
		Bucket:    "b",
		Database:  "p_stage_archive",
		Secret:    map[string]string{},
		AccountID: "210987654321",
	}
	for _, n := range []string{"github_webhook", "ingest_token", "api_token", "cursor_key"} {
		vals.Secret[n] = "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + n
	}
	fns := readTerraform(t, vals)
	var names []string
	for n := range fns {
		names = append(names, n)
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "api archiver ingest projector reconcile" {
		t.Fatalf("functions %q", got)
	}
	if got := fns["projector"].Env["STREAMFOLD_STAGE"]; got != "stage" {
		t.Errorf("projector STREAMFOLD_STAGE = %q", got)
	}
	if got := fns["archiver"].Env["ARCHIVE_BUCKET"]; got != "b" {
		t.Errorf("archiver ARCHIVE_BUCKET = %q", got)
	}
	if got := fns["archiver"].Env["ARCHIVE_PREFIX"]; got == "" {
		t.Error("archiver ARCHIVE_PREFIX: empty, want var.archive_prefix's default")
	}
	if got := fns["archiver"].Env["ARCHIVE_BUCKET_OWNER"]; got != "210987654321" {
		t.Errorf("archiver ARCHIVE_BUCKET_OWNER = %q, want the account id", got)
	}
	if got := fns["archiver"].Env["ARCHIVE_CATALOG"]; got != "glue" {
		t.Errorf("archiver ARCHIVE_CATALOG = %q, want glue", got)
	}
	if got := fns["archiver"].Env["ARCHIVE_NAMESPACE"]; got != "p_stage_archive" {
		t.Errorf("archiver ARCHIVE_NAMESPACE = %q, want the Glue database's name", got)
	}
	if fns["ingest"].Timeout <= 0 || fns["api"].Memory <= 0 {
		t.Errorf("timeout/memory %+v", fns["ingest"])
	}
	delete(vals.Secret, "cursor_key")
	if _, err := parseTerraform(filepath.Join(repoRoot(t), "terraform"), vals); err == nil || !strings.Contains(err.Error(), "aws_secretsmanager_secret.cursor_key.arn") {
		t.Errorf("missing value: %v, want an error naming aws_secretsmanager_secret.cursor_key.arn", err)
	}
}
