package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/terraform/deploy"
	"github.com/zclconf/go-cty/cty"
)

// lambdaCommands are the cmd/<name> main packages that run as Lambda
// functions: the zips `streamfold deploy` checks for and .ci/package.sh
// builds (dist/<name>.zip).
var lambdaCommands = deploy.Functions

// testOnlyEnv are environment variables the functions read that Terraform
// must not set: endpoint overrides for local stacks and tests.
var testOnlyEnv = map[string]bool{
	"STREAMFOLD_DYNAMODB_ENDPOINT": true,
	"STREAMFOLD_S3_ENDPOINT":       true,
	"STREAMFOLD_S3_ACCESS_KEY":     true, // with STREAMFOLD_S3_ENDPOINT only (cmd/archiver)
	"STREAMFOLD_S3_SECRET_KEY":     true,
}

// featureEnv are environment variables Terraform sets only when a variable
// turns their feature on (off, the functions' default applies), with that
// variable: TestPlanGSIShards checks them set.
var featureEnv = map[string]string{
	"STREAMFOLD_GSI_SHARDS": "gsi_shards",
}

var packageMainRE = regexp.MustCompile(`(?m)^package main\b`)

// hasMain reports whether cmd/<name> holds a main package (non-test Go
// files) and returns its sources, followed by the env.go of every
// streamfold package they import (archiver.ConfigFromEnv: a package that
// reads a function's variables for it keeps that in env.go).
func hasMain(name string) (bool, []string, error) {
	paths, err := filepath.Glob(filepath.Join("..", "cmd", name, "*.go"))
	if err != nil {
		return false, nil, err
	}
	var srcs []string
	main := false
	imported := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return false, nil, err
		}
		srcs = append(srcs, string(b))
		if packageMainRE.Match(b) {
			main = true
		}
		for _, m := range importRE.FindAllSubmatch(b, -1) {
			imported[string(m[1])] = true
		}
	}
	for _, pkg := range sortedMapKeys(imported) {
		b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(pkg), "env.go"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, nil, err
		}
		srcs = append(srcs, string(b))
	}
	return main, srcs, nil
}

// importRE finds the streamfold packages a file imports (path below the
// module).
var importRE = regexp.MustCompile(`"github\.com/streamfold/streamfold/([a-z0-9_/]+)"`)

// envNames are the environment variable names a function's source reads:
// string literals that look like STREAMFOLD_*, ARCHIVE_*, GITHUB_*,
// RECONCILE_* names.
var envNameRE = regexp.MustCompile(`"((?:STREAMFOLD|ARCHIVE|GITHUB|RECONCILE)_[A-Z0-9_]+)"`)

func envNames(srcs []string) []string {
	seen := map[string]bool{}
	for _, s := range srcs {
		for _, m := range envNameRE.FindAllStringSubmatch(s, -1) {
			seen[m[1]] = true
		}
	}
	return sortedMapKeys(seen)
}

func TestLambdaFunctions(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"package_dir": cty.StringVal("/pkg")}})
	fns := map[string]*instance{}
	for _, in := range ev.instancesOf("resource", "aws_lambda_function") {
		fns[in.Key] = in
	}
	for _, name := range lambdaCommands {
		in, ok := fns[name]
		if !ok {
			t.Errorf("cmd/%s: no aws_lambda_function for it", name)
			continue
		}
		delete(fns, name)
		o := in.Obj
		checks := [][3]string{
			{"runtime", getStr(o, "runtime"), "provided.al2023"},
			{"handler", getStr(o, "handler"), "bootstrap"},
			{"function_name", getStr(o, "function_name"), "streamfold-dev-" + name},
			{"filename", getStr(o, "filename"), "/pkg/" + name + ".zip"},
			{"source_code_hash", getStr(o, "source_code_hash"), mustFakeHash("/pkg/" + name + ".zip")},
		}
		if arch, err := stringList(attr(o, "architectures")); err != nil || strings.Join(arch, ",") != "arm64" {
			t.Errorf("%s: architectures %v, want [arm64]", in.Addr, arch)
		}
		lc := blocks(o, "logging_config")
		if len(lc) != 1 || getStr(lc[0], "log_group") != "/aws/lambda/streamfold-dev-"+name {
			t.Errorf("%s: logging_config must name its own log group /aws/lambda/streamfold-dev-%s", in.Addr, name)
		}
		for _, c := range checks {
			if c[1] != c[2] {
				t.Errorf("%s: %s = %q, want %q", in.Addr, c[0], c[1], c[2])
			}
		}

		// The environment Terraform sets equals what the code reads.
		envs := blocks(o, "environment")
		set := map[string]bool{}
		if len(envs) == 1 {
			for k := range attr(envs[0], "variables").AsValueMap() {
				set[k] = true
			}
		}
		main, srcs, err := hasMain(name)
		if err != nil {
			t.Fatal(err)
		}
		if !main {
			t.Logf("cmd/%s has no main package yet: `make package` skips it and a plan fails until it exists", name)
			continue
		}
		read := map[string]bool{}
		for _, n := range envNames(srcs) {
			read[n] = true
			switch {
			case testOnlyEnv[n] && set[n]:
				t.Errorf("%s: sets %s, a test-only override", in.Addr, n)
			case !testOnlyEnv[n] && featureEnv[n] == "" && !set[n]:
				t.Errorf("%s: cmd/%s reads %s but Terraform does not set it", in.Addr, name, n)
			}
		}
		for n := range set {
			if !read[n] {
				t.Errorf("%s: Terraform sets %s but cmd/%s never reads it", in.Addr, n, name)
			}
		}
	}
	for name, in := range fns {
		t.Errorf("%s: no cmd/%s among the Lambda commands %v", in.Addr, name, lambdaCommands)
	}

	// The default package directory is ../dist, where `make package` writes.
	_, ev = loadEvaluated(t, evalOptions{})
	for _, in := range ev.instancesOf("resource", "aws_lambda_function") {
		if got, want := getStr(in.Obj, "filename"), "./../dist/"+in.Key+".zip"; got != want {
			t.Errorf("%s: default filename %q, want %q", in.Addr, got, want)
		}
	}
}

func mustFakeHash(path string) string {
	v, err := fakeHashFunc.Call([]cty.Value{cty.StringVal(path)})
	if err != nil {
		panic(err)
	}
	return v.AsString()
}

func TestEnvNames(t *testing.T) {
	src := `x := os.Getenv("STREAMFOLD_PREFIX"); y := envOr("ARCHIVE_BUCKET", "a"); z := "GITHUB_WEBHOOK_SECRET_ARN"; w := "AWS_REGION"; v := "STREAMFOLD_"; u := getenv("RECONCILE_HEAL")`
	got := envNames([]string{src})
	if want := "ARCHIVE_BUCKET GITHUB_WEBHOOK_SECRET_ARN RECONCILE_HEAL STREAMFOLD_PREFIX"; strings.Join(got, " ") != want {
		t.Fatalf("envNames = %v, want %s", got, want)
	}
}

// TestDescriptions: every variable and output is described, and every
// variable has a type.
func TestDescriptions(t *testing.T) {
	cfg, err := parseConfig(readConfigFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kind := range []string{"variable", "output"} {
		for _, b := range cfg.find(kind, "") {
			n++
			a, ok := b.Block.Body.Attributes["description"]
			if !ok {
				t.Errorf("%s (%s): no description", b.Addr(), b.File)
				continue
			}
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() || v.Type() != cty.String || len(strings.TrimSpace(v.AsString())) < 10 {
				t.Errorf("%s (%s): description must be a literal sentence", b.Addr(), b.File)
			}
			if _, ok := b.Block.Body.Attributes["type"]; kind == "variable" && !ok {
				t.Errorf("%s (%s): no type", b.Addr(), b.File)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d variables and outputs", n)
	}
}

// TestStagePolicies: PITR, bucket versioning, force_destroy and secret
// recovery follow the stage.
func TestStagePolicies(t *testing.T) {
	type want struct {
		pitr           bool
		versioning     string
		forceDestroy   bool
		secretRecovery int64
	}
	for stage, w := range map[string]want{
		"dev":   {false, "Disabled", true, 0},
		"stage": {true, "Enabled", false, 7},
		"prod":  {true, "Enabled", false, 30},
	} {
		t.Run(stage, func(t *testing.T) {
			_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"stage": cty.StringVal(stage)}})
			for _, tb := range ev.instancesOf("resource", "aws_dynamodb_table") {
				pitr := blocks(tb.Obj, "point_in_time_recovery")
				sse := blocks(tb.Obj, "server_side_encryption")
				if len(sse) != 1 || !attr(sse[0], "enabled").True() {
					t.Errorf("%s: server-side encryption not enabled", tb.Addr)
				}
				if getStr(tb.Obj, "billing_mode") != "PAY_PER_REQUEST" {
					t.Errorf("%s: not on-demand", tb.Addr)
				}
				if spec, ok := schema.TableSpec(tb.Key); !ok || !spec.PITR {
					if len(pitr) == 1 && attr(pitr[0], "enabled").True() {
						t.Errorf("%s: PITR on in %s, but its spec says no PITR", tb.Addr, stage)
					}
					continue
				}
				if len(pitr) != 1 || attr(pitr[0], "enabled").True() != w.pitr {
					t.Errorf("%s: PITR in %s must be %v", tb.Addr, stage, w.pitr)
				}
			}
			vs := blocks(ev.instancesOf("resource", "aws_s3_bucket_versioning")[0].Obj, "versioning_configuration")
			if got := getStr(vs[0], "status"); got != w.versioning {
				t.Errorf("archive versioning in %s: %q, want %q", stage, got, w.versioning)
			}
			if got := attr(ev.resources["aws_s3_bucket"]["archive"], "force_destroy").True(); got != w.forceDestroy {
				t.Errorf("archive force_destroy in %s: %v, want %v", stage, got, w.forceDestroy)
			}
			for _, s := range ev.instancesOf("resource", "aws_secretsmanager_secret") {
				if n, _ := attr(s.Obj, "recovery_window_in_days").AsBigFloat().Int64(); n != w.secretRecovery {
					t.Errorf("%s: recovery window %d in %s, want %d", s.Addr, n, stage, w.secretRecovery)
				}
			}
		})
	}
}

// TestArchiveBucket: public access blocked, encrypted, TLS only, data files
// to Glacier after a year per table data directory (the Iceberg metadata
// stays in Standard).
func TestArchiveBucket(t *testing.T) {
	src := tablesSource(t)
	g := readTables(t, src)
	_, ev := loadEvaluated(t, evalOptions{Files: map[string]string{generatedTables: src}})
	bucketID := "id:aws_s3_bucket.archive"
	one := func(typ string) cty.Value {
		var ins []*instance
		for _, in := range ev.instancesOf("resource", typ) {
			if getStr(in.Obj, "bucket") == bucketID { // not the failures bucket (onfailure_test.go)
				ins = append(ins, in)
			}
		}
		if len(ins) != 1 {
			t.Fatalf("%d %s, want 1", len(ins), typ)
		}
		if got := getStr(ins[0].Obj, "bucket"); got != bucketID {
			t.Fatalf("%s: bucket %q, want the archive bucket", ins[0].Addr, got)
		}
		return ins[0].Obj
	}
	pab := one("aws_s3_bucket_public_access_block")
	for _, k := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
		if v := attr(pab, k); v == nilValue || !v.True() {
			t.Errorf("public access block: %s is not true", k)
		}
	}
	sse := one("aws_s3_bucket_server_side_encryption_configuration")
	alg := ""
	for _, r := range blocks(sse, "rule") {
		for _, d := range blocks(r, "apply_server_side_encryption_by_default") {
			alg = getStr(d, "sse_algorithm")
		}
	}
	if alg != "AES256" && alg != "aws:kms" {
		t.Errorf("bucket encryption %q, want AES256 or aws:kms", alg)
	}
	if got := getStr(one("aws_s3_bucket_policy"), "policy"); got != "json:data.aws_iam_policy_document.archive_bucket" {
		t.Errorf("bucket policy %q, want the TLS-only document", got)
	}
	tls := false
	for _, st := range blocks(ev.data["aws_iam_policy_document"]["archive_bucket"], "statement") {
		res, _ := stringList(attr(st, "resources"))
		act, _ := stringList(attr(st, "actions"))
		for _, c := range blocks(st, "condition") {
			vals, _ := stringList(attr(c, "values"))
			if getStr(st, "effect") == "Deny" && getStr(c, "test") == "Bool" && getStr(c, "variable") == "aws:SecureTransport" &&
				strings.Join(vals, ",") == "false" && strings.Join(act, ",") == "s3:*" &&
				strings.Join(res, ",") == "arn:fake:aws_s3_bucket.archive,arn:fake:aws_s3_bucket.archive/*" {
				tls = true
			}
		}
	}
	if !tls {
		t.Error("bucket policy: no statement denying s3:* on the bucket and its objects when aws:SecureTransport is false")
	}
	lc := one("aws_s3_bucket_lifecycle_configuration")
	transitions := map[string]string{}
	for _, r := range blocks(lc, "rule") {
		prefix := ""
		for _, f := range blocks(r, "filter") {
			prefix = getStr(f, "prefix")
		}
		for _, tr := range blocks(r, "transition") {
			days, _ := attr(tr, "days").AsBigFloat().Int64()
			transitions[prefix] = fmt.Sprintf("%d %s %s", days, getStr(tr, "storage_class"), getStr(r, "status"))
		}
	}
	want := map[string]string{}
	for name := range g.Tables {
		want["archive/"+name+"/data/"] = "365 GLACIER_IR Enabled"
	}
	if fmt.Sprint(transitions) != fmt.Sprint(want) {
		t.Errorf("lifecycle transitions %v, want %v (each table's data files after a year, to a class rebuild and Athena can still read; not the tables' metadata/)", transitions, want)
	}
}

// TestAlarms: IteratorAge per stream consumer, failure-queue depth per
// queue, Errors per function, all notifying the optional SNS topic.
func TestAlarms(t *testing.T) {
	const topic = "arn:aws:sns:eu-west-1:123456789012:ops"
	for _, sns := range []string{"", topic} {
		_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"alarm_sns_topic_arn": cty.StringVal(sns)}})
		got := map[string]string{}
		for _, a := range ev.instancesOf("resource", "aws_cloudwatch_metric_alarm") {
			dims := attr(a.Obj, "dimensions").AsValueMap()
			var dim []string
			for k, v := range dims {
				dim = append(dim, k+"="+v.AsString())
			}
			sort.Strings(dim) // maps iterate in random order
			sort.Strings(dim)
			th, _ := attr(a.Obj, "threshold").AsBigFloat().Float64()
			got[getStr(a.Obj, "alarm_name")] = fmt.Sprintf("%s/%s %s %s %g", getStr(a.Obj, "namespace"), getStr(a.Obj, "metric_name"), strings.Join(dim, ","), getStr(a.Obj, "comparison_operator"), th)
			for _, k := range []string{"alarm_actions", "ok_actions"} {
				acts, _ := stringList(attr(a.Obj, k))
				if (sns == "" && len(acts) != 0) || (sns != "" && strings.Join(acts, ",") != sns) {
					t.Errorf("%s: %s %v with alarm_sns_topic_arn %q", a.Addr, k, acts, sns)
				}
			}
		}
		want := map[string]string{}
		for _, c := range streamConsumers {
			want["streamfold-dev-"+c+"-iterator-age"] = fmt.Sprintf(`AWS/Lambda/IteratorAge FunctionName=streamfold-dev-%s GreaterThanThreshold 300000`, c)
		}
		for _, c := range streamConsumers { // onfailure.tf
			want["streamfold-dev-"+c+"-stream-dropped"] = fmt.Sprintf(`AWS/Lambda/DroppedEventCount EventSourceMappingUUID=uuid:aws_lambda_event_source_mapping.stream[%q] GreaterThanThreshold 0`, c)
			want["streamfold-dev-"+c+"-stream-failed-invokes"] = fmt.Sprintf(`AWS/Lambda/FailedInvokeEventCount EventSourceMappingUUID=uuid:aws_lambda_event_source_mapping.stream[%q] GreaterThanThreshold 0`, c)
		}
		for _, task := range []string{"compact", "verify"} { // maintenance.tf
			want["streamfold-dev-maintenance-"+task+"-missed"] = fmt.Sprintf(`Streamfold/MaintenanceSucceeded Deployment=streamfold-dev,Task=%s LessThanThreshold 1`, task)
		}
		want["streamfold-dev-verify-differences"] = `Streamfold/VerifyDifferences Deployment=streamfold-dev GreaterThanThreshold 0`
		want["streamfold-dev-reconcile-gaps"] = `Streamfold/ReconcileGaps Deployment=streamfold-dev GreaterThanThreshold 0` // reconcile.tf
		want["streamfold-dev-archive-unavailable"] = `Streamfold/ArchiveUnavailable Deployment=streamfold-dev GreaterThanOrEqualToThreshold 1`
		for _, q := range []string{"ingest"} {
			want["streamfold-dev-"+q+"-failures-not-empty"] = fmt.Sprintf("AWS/SQS/ApproximateNumberOfMessagesVisible QueueName=streamfold-dev-%s-failures GreaterThanThreshold 0", q)
		}
		for _, c := range []string{"ingest", "projector"} { // deadletters.tf
			want["streamfold-dev-"+c+"-dead-letters"] = fmt.Sprintf("Streamfold/DeadLettered Consumer=%s,Table=streamfold-dev-dead-letters GreaterThanOrEqualToThreshold 1", c)
		}
		for _, f := range lambdaCommands { // concurrency.tf
			want["streamfold-dev-"+f+"-throttles"] = fmt.Sprintf(`AWS/Lambda/Throttles FunctionName=streamfold-dev-%s GreaterThanThreshold 0`, f)
		}
		for _, f := range lambdaCommands {
			want["streamfold-dev-"+f+"-errors"] = fmt.Sprintf(`AWS/Lambda/Errors FunctionName=streamfold-dev-%s GreaterThanThreshold 0`, f)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("alarms\n  %v\nwant\n  %v", got, want)
		}
	}
}

// TestProducers: the EventBridge rule (seed 002) targets the ingest
// function, which EventBridge may invoke; both function URLs are public
// (auth NONE) with the two permissions a function URL needs.
func TestProducers(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	rule := ev.resources["aws_cloudwatch_event_rule"]["step_functions"]
	pattern := getStr(rule, "event_pattern")
	if want := `{"detail":{"status":["RUNNING","SUCCEEDED","FAILED","TIMED_OUT","ABORTED"]},"detail-type":["Step Functions Execution Status Change"],"source":["aws.states"]}`; pattern != want {
		t.Errorf("event pattern %s, want %s", pattern, want)
	}
	ingestARN := `arn:fake:aws_lambda_function.function["ingest"]`
	ingestName := "streamfold-dev-ingest"
	target := ev.resources["aws_cloudwatch_event_target"]["step_functions"]
	if getStr(target, "arn") != ingestARN || getStr(target, "rule") != "streamfold-dev-step-functions-status" {
		t.Errorf("event target arn %q rule %q", getStr(target, "arn"), getStr(target, "rule"))
	}
	perms := map[string]string{}
	for _, p := range ev.instancesOf("resource", "aws_lambda_permission") {
		perms[p.Block.Name] = fmt.Sprintf("%s %s %s %s %s %v", getStr(p.Obj, "function_name"), getStr(p.Obj, "action"), getStr(p.Obj, "principal"),
			getStr(p.Obj, "source_arn"), getStr(p.Obj, "function_url_auth_type"), attr(p.Obj, "invoked_via_function_url") != nilValue && attr(p.Obj, "invoked_via_function_url").True())
	}
	apiName := "streamfold-dev-api"
	want := map[string]string{
		"step_functions": ingestName + " lambda:InvokeFunction events.amazonaws.com arn:fake:aws_cloudwatch_event_rule.step_functions  false",
		"webhook_url":    ingestName + " lambda:InvokeFunctionUrl *  NONE false",
		"webhook_invoke": ingestName + " lambda:InvokeFunction *   true",
		"api_url":        apiName + " lambda:InvokeFunctionUrl *  NONE false",
		"api_invoke":     apiName + " lambda:InvokeFunction *   true",
	}
	if fmt.Sprint(perms) != fmt.Sprint(want) {
		t.Errorf("lambda permissions\n  %v\nwant\n  %v", perms, want)
	}
	for name, fn := range map[string]string{"webhook": ingestName, "api": apiName} {
		u := ev.resources["aws_lambda_function_url"][name]
		if getStr(u, "function_name") != fn || getStr(u, "authorization_type") != "NONE" {
			t.Errorf("function URL %s: function %q authorization %q", name, getStr(u, "function_name"), getStr(u, "authorization_type"))
		}
	}
	ic := ev.resources["aws_lambda_function_event_invoke_config"]["ingest"]
	dest := ""
	for _, dc := range blocks(ic, "destination_config") {
		for _, of := range blocks(dc, "on_failure") {
			dest = getStr(of, "destination")
		}
	}
	if getStr(ic, "function_name") != ingestName || dest != `arn:fake:aws_sqs_queue.failures["ingest"]` {
		t.Errorf("ingest async config: function %q on-failure %q", getStr(ic, "function_name"), dest)
	}
}
