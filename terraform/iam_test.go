package terraform

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/streamfold/streamfold/schema"
	"github.com/zclconf/go-cty/cty"
)

// wildcardAllowed lists every resource with a '*' that a policy may grant,
// by function, with the reason. Nothing else may contain '*', and "*" alone
// is never allowed. An entry nobody uses fails the test, so the list stays
// exact.
var wildcardAllowed = []struct {
	function, resource, reason string
}{
	{"projector", "arn:fake:aws_dynamodb_table.table[\"events\"]/stream/*", "dynamodb:ListStreams names no stream (it lists a table's streams); limited to the events table"},
	{"archiver", "arn:fake:aws_dynamodb_table.table[\"events\"]/stream/*", "dynamodb:ListStreams names no stream (it lists a table's streams); limited to the events table"},
	{"archiver", "arn:fake:aws_s3_bucket.archive/archive/*", "object keys under the archive prefix are made at run time"},
	{"archiver", "arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/*", "glue:GetTables lists the archive database's tables; its request names no table"},
	{"projector", "arn:fake:aws_s3_bucket.failures/aws/lambda/*", "the event source mapping names its on-failure objects (aws/lambda/<mapping UUID>/...)"},
	{"archiver", "arn:fake:aws_s3_bucket.failures/aws/lambda/*", "the event source mapping names its on-failure objects (aws/lambda/<mapping UUID>/...)"},
	{"ingest", "arn:aws:states:eu-west-1:123456789012:stateMachine:*", "seed 002: one account-wide rule; any state machine may be an agent, recognised by its tags (tag reads only)"},
	{"projector", `arn:fake:aws_cloudwatch_log_group.function["projector"]:*`, "Lambda names the log streams of the function's own group at run time"},
	{"archiver", `arn:fake:aws_cloudwatch_log_group.function["archiver"]:*`, "Lambda names the log streams of the function's own group at run time"},
	{"ingest", `arn:fake:aws_cloudwatch_log_group.function["ingest"]:*`, "Lambda names the log streams of the function's own group at run time"},
	{"api", `arn:fake:aws_cloudwatch_log_group.function["api"]:*`, "Lambda names the log streams of the function's own group at run time"},
	{"reconcile", "arn:fake:aws_s3_bucket.archive/archive/*", "object keys under the archive prefix are made at run time (read; written only with reconcile_heal)"},
	{"reconcile", `arn:fake:aws_cloudwatch_log_group.function["reconcile"]:*`, "Lambda names the log streams of the function's own group at run time"},
}

// unmanagedAllowed lists every resource a policy may name that this
// configuration does not manage (so it has no "arn:fake:" ARN here), by
// function, with the reason: the Glue Data Catalog itself, and the archive's
// Iceberg tables, which the archiver creates (one per table of the
// generated JSON). An entry nobody uses fails the test.
func unmanagedAllowed() []struct{ function, resource, reason string } {
	out := []struct{ function, resource, reason string }{
		{"archiver", glueCatalogARN, "Glue authorises every table and database call on the account's Data Catalog too"},
		{"reconcile", glueCatalogARN, "Glue authorises every table and database call on the account's Data Catalog too"},
	}
	for _, n := range archiveTableNames() {
		out = append(out, struct{ function, resource, reason string }{"archiver", glueTableARN(n),
			"the archive's Iceberg table " + n + ", created and evolved by the archiver (generated/iceberg_tables.json)"})
		out = append(out, struct{ function, resource, reason string }{"reconcile", glueTableARN(n),
			"the archive's Iceberg table " + n + ", read by reconcile (and committed to when it heals)"})
	}
	return out
}

const (
	glueCatalogARN = "arn:aws:glue:eu-west-1:123456789012:catalog"
	glueDatabase   = "arn:fake:aws_glue_catalog_database.archive"
)

func glueTableARN(name string) string {
	return "arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/" + name
}

// grant is one action on one resource.
type grant struct{ action, resource string }

func (g grant) String() string { return g.action + " on " + g.resource }

var actionRE = regexp.MustCompile(`^[a-z0-9-]+:[A-Za-z0-9]+$`)

// policyStatement is an evaluated statement of an aws_iam_policy_document.
type policyStatement struct {
	doc, sid, effect     string
	actions, resources   []string
	hasPrincipals        bool
	actionErr, resourErr error
}

// statements returns the statements of every aws_iam_policy_document, by
// document name.
func statements(ev *evaluated) map[string][]policyStatement {
	out := map[string][]policyStatement{}
	for _, in := range ev.instancesOf("data", "aws_iam_policy_document") {
		for _, st := range blocks(in.Obj, "statement") {
			ps := policyStatement{doc: in.Block.Name, sid: getStr(st, "sid"), effect: getStr(st, "effect")}
			if ps.effect == "" {
				ps.effect = "Allow"
			}
			ps.actions, ps.actionErr = stringList(attr(st, "actions"))
			if v := attr(st, "resources"); v != nilValue {
				ps.resources, ps.resourErr = stringList(v)
			}
			ps.hasPrincipals = len(blocks(st, "principals")) > 0
			out[in.Block.Name] = append(out[in.Block.Name], ps)
		}
	}
	return out
}

// schedulerRoles are the roles (and their inline policies) EventBridge
// Scheduler assumes, not functions: maintenance.tf's and reconcile.tf's.
var schedulerRoles = map[string]bool{"scheduler": true, "reconcile_scheduler": true}

// checkIAM reports every IAM problem: wildcard actions, wildcard resources
// outside the allow-list, roles shared or missing, and any difference
// between what each function's policy grants and what its code uses
// (expected).
func checkIAM(ev *evaluated, expected map[string][]grant) []string {
	var errs []string
	docs := statements(ev)
	usedAllow := map[int]bool{}
	unmanaged := unmanagedAllowed()
	usedUnmanaged := map[int]bool{}
	functions := ev.instancesOf("resource", "aws_lambda_function")
	fnNames := map[string]bool{}
	for _, f := range functions {
		fnNames[f.Key] = true
	}
	for _, doc := range sortedMapKeys(docs) {
		for _, st := range docs[doc] {
			where := fmt.Sprintf("data.aws_iam_policy_document.%s statement %q", doc, st.sid)
			if st.actionErr != nil {
				errs = append(errs, fmt.Sprintf("%s: actions: %v", where, st.actionErr))
			}
			if st.effect == "Deny" {
				continue // denying broadly is always safe (the TLS-only bucket policy denies s3:*)
			}
			for _, a := range st.actions {
				if !actionRE.MatchString(a) {
					errs = append(errs, fmt.Sprintf("%s: action %q is not one exact action (no wildcards)", where, a))
				}
			}
			if st.hasPrincipals {
				if len(st.actions) != 1 || st.actions[0] != "sts:AssumeRole" || len(st.resources) > 0 {
					errs = append(errs, fmt.Sprintf("%s: a statement with principals must be a trust statement (sts:AssumeRole, no resources)", where))
				}
				continue
			}
			if st.resourErr != nil || len(st.resources) == 0 {
				errs = append(errs, fmt.Sprintf("%s: no resources (%v)", where, st.resourErr))
			}
			for _, r := range st.resources {
				if r == "*" {
					errs = append(errs, fmt.Sprintf("%s: resource \"*\"", where))
					continue
				}
				if strings.Contains(r, "*") {
					ok := false
					for i, w := range wildcardAllowed {
						if w.function == doc && w.resource == r {
							ok, usedAllow[i] = true, true
						}
					}
					if !ok {
						errs = append(errs, fmt.Sprintf("%s: wildcard resource %q is not in iam_test.go's allow-list", where, r))
					}
					continue
				}
				if !strings.HasPrefix(r, "arn:fake:") {
					ok := false
					for i, u := range unmanaged {
						if u.function == doc && u.resource == r {
							ok, usedUnmanaged[i] = true, true
						}
					}
					if !ok {
						errs = append(errs, fmt.Sprintf("%s: resource %q is not the ARN of a resource this configuration manages (nor in iam_test.go's unmanagedAllowed)", where, r))
					}
				}
			}
		}
	}
	for i, w := range wildcardAllowed {
		if !usedAllow[i] && fnNames[w.function] {
			errs = append(errs, fmt.Sprintf("allow-list entry %s %q is not used by any policy: remove it", w.function, w.resource))
		}
	}
	for i, u := range unmanaged {
		if !usedUnmanaged[i] && fnNames[u.function] {
			errs = append(errs, fmt.Sprintf("unmanagedAllowed entry %s %q is not used by any policy: remove it", u.function, u.resource))
		}
	}

	// One role per function, one inline policy per role, no managed policies.
	roles := map[string]string{}
	for _, f := range functions {
		want := fmt.Sprintf(`arn:fake:aws_iam_role.function[%q]`, f.Key)
		role := getStr(f.Obj, "role")
		if role != want {
			errs = append(errs, fmt.Sprintf("%s: role %q, want its own role %s", f.Addr, role, want))
		}
		if first, dup := roles[role]; dup {
			errs = append(errs, fmt.Sprintf("%s and %s share the role %s", first, f.Addr, role))
			continue
		}
		roles[role] = f.Addr
	}
	for _, r := range ev.instancesOf("resource", "aws_iam_role") {
		if schedulerRoles[r.Block.Name] {
			continue // EventBridge Scheduler's roles: maintenance_test.go, reconcile_test.go
		}
		if got := getStr(r.Obj, "assume_role_policy"); got != "json:data.aws_iam_policy_document.lambda_assume" {
			errs = append(errs, fmt.Sprintf("%s: assume_role_policy %q, want data.aws_iam_policy_document.lambda_assume.json", r.Addr, got))
		}
	}
	var lambdaTrust []string
	for _, st := range docs["lambda_assume"] {
		lambdaTrust = append(lambdaTrust, st.actions...)
	}
	if strings.Join(lambdaTrust, ",") != "sts:AssumeRole" {
		errs = append(errs, fmt.Sprintf("lambda_assume: actions %v, want [sts:AssumeRole]", lambdaTrust))
	}
	perRole := map[string]int{}
	for _, p := range ev.instancesOf("resource", "aws_iam_role_policy") {
		if schedulerRoles[p.Block.Name] {
			continue // EventBridge Scheduler's roles: maintenance_test.go, reconcile_test.go
		}
		role := getStr(p.Obj, "role")
		perRole[role]++
		key := p.Key
		if want := fmt.Sprintf(`id:aws_iam_role.function[%q]`, key); role != want {
			errs = append(errs, fmt.Sprintf("%s: role %q, want %s", p.Addr, role, want))
		}
		if want := "json:data.aws_iam_policy_document." + key; getStr(p.Obj, "policy") != want {
			errs = append(errs, fmt.Sprintf("%s: policy %q, want %s", p.Addr, getStr(p.Obj, "policy"), want))
		}
	}
	for _, f := range functions {
		if n := perRole[fmt.Sprintf(`id:aws_iam_role.function[%q]`, f.Key)]; n != 1 {
			errs = append(errs, fmt.Sprintf("%s: its role has %d inline policies, want 1", f.Addr, n))
		}
	}
	for _, typ := range []string{"aws_iam_role_policy_attachment", "aws_iam_policy", "aws_iam_policy_attachment"} {
		for _, b := range ev.cfg.find("resource", typ) {
			errs = append(errs, fmt.Sprintf("%s (%s): no managed policies; each role has exactly its inline policy", b.Addr(), b.File))
		}
	}

	// Exactly the grants each function's code uses.
	for _, fn := range sortedMapKeys(expected) {
		got := map[grant]bool{}
		for _, st := range docs[fn] {
			if st.effect != "Allow" {
				continue
			}
			for _, a := range st.actions {
				for _, r := range st.resources {
					got[grant{a, r}] = true
				}
			}
		}
		want := map[grant]bool{}
		for _, g := range expected[fn] {
			want[g] = true
			if !got[g] {
				errs = append(errs, fmt.Sprintf("%s: policy lacks %s, which cmd/%s uses", fn, g, fn))
			}
		}
		var extra []string
		for g := range got {
			if !want[g] {
				extra = append(extra, g.String())
			}
		}
		sort.Strings(extra)
		for _, g := range extra {
			errs = append(errs, fmt.Sprintf("%s: policy grants %s, which cmd/%s does not use", fn, g, fn))
		}
	}
	return errs
}

func tableARN(logical string) string {
	return `arn:fake:aws_dynamodb_table.table["` + logical + `"]`
}

// projectionTables are the tables the projector writes and the API reads:
// every table of schema.Tables() but the event log, the dead letters, the
// projector's folded state and the local runner's checkpoints.
func projectionTables() []schema.Table {
	var out []schema.Table
	for _, logical := range schema.ProjectionTables() {
		t, _ := schema.TableSpec(logical)
		out = append(out, t)
	}
	return out
}

// expectedGrants is what each function's code calls, on what (see the
// package's DynamoAPI/DeadLetterAPI/PutItemAPI/TagLister/secretGetter
// interfaces and the archiver's S3 interface). Projection tables and
// their indexes come from schema.Tables(), so a new table or index there
// that Terraform does not grant fails the test. Reconcile's are those of
// the default reconcile_heal = false (expectedGrantsHealing for true).
func expectedGrants() map[string][]grant { return expectedGrantsHealing(false) }

// expectedGrantsHealing is expectedGrants with reconcile_heal = heal: only
// then does reconcile get the projector's and the archiver's writes (the
// paths heal feeds the missing events through).
func expectedGrantsHealing(heal bool) map[string][]grant {
	g := map[string][]grant{}
	add := func(fn string, resources []string, actions ...string) {
		for _, a := range actions {
			for _, r := range resources {
				g[fn] = append(g[fn], grant{a, r})
			}
		}
	}
	events := tableARN(schema.TableEvents)
	stream := events + "/stream/2024-01-01T00:00:00.000"
	logs := func(fn string) []string {
		return []string{fmt.Sprintf(`arn:fake:aws_cloudwatch_log_group.function[%q]:*`, fn)}
	}
	queue := func(fn string) []string { return []string{fmt.Sprintf(`arn:fake:aws_sqs_queue.failures[%q]`, fn)} }
	var projTables, projIndexes []string
	for _, t := range projectionTables() {
		projTables = append(projTables, tableARN(t.Logical))
		for _, ix := range t.Indexes {
			projIndexes = append(projIndexes, tableARN(t.Logical)+"/index/"+ix.Name)
		}
	}
	for _, fn := range []string{"projector", "archiver"} {
		add(fn, []string{stream}, "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
		add(fn, []string{events + "/stream/*"}, "dynamodb:ListStreams")
		add(fn, []string{"arn:fake:aws_s3_bucket.failures/aws/lambda/*"}, "s3:PutObject")
		add(fn, []string{"arn:fake:aws_s3_bucket.failures"}, "s3:ListBucket")
	}
	add("projector", []string{tableARN(schema.TableAggregates)}, "dynamodb:BatchGetItem", "dynamodb:PutItem")
	add("projector", projTables, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem")
	add("projector", []string{tableARN(schema.TableDeadLetters)}, "dynamodb:PutItem")
	// internal/opswatch: gaps and heartbeats (opsrec) in the checkpoints table.
	add("projector", []string{tableARN(schema.TableCheckpoints)}, "dynamodb:PutItem")
	add("archiver", []string{tableARN(schema.TableCheckpoints)}, "dynamodb:PutItem")
	add("archiver", []string{"arn:fake:aws_s3_bucket.archive/archive/*"}, "s3:GetObject", "s3:PutObject", "s3:DeleteObject")
	add("archiver", []string{"arn:fake:aws_s3_bucket.archive"}, "s3:ListBucket")
	// The Iceberg catalog (archiver/catalog_glue.go, iceberg-go's Glue
	// catalog): Glue authorises each call on the catalog, the database and
	// the tables it touches.
	add("archiver", []string{glueCatalogARN, glueDatabase}, "glue:GetDatabase")
	tables := []string{glueCatalogARN, glueDatabase}
	for _, n := range archiveTableNames() {
		tables = append(tables, glueTableARN(n))
	}
	add("archiver", tables, "glue:GetTable", "glue:CreateTable", "glue:UpdateTable")
	add("archiver", []string{glueCatalogARN, glueDatabase, "arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/*"}, "glue:GetTables")
	// The scheduled verify (archiver/rebuild.DynamoLive's reads).
	add("archiver", []string{tableARN(schema.TableWorkflows) + "/index/GSI1"}, "dynamodb:Query")
	add("archiver", []string{tableARN(schema.TableMetrics), tableARN(schema.TableWorkflowRuns), tableARN(schema.TableWorkflowJobs)}, "dynamodb:Scan")
	add("ingest", []string{events}, "dynamodb:PutItem")
	add("ingest", []string{"arn:aws:states:eu-west-1:123456789012:stateMachine:*"}, "states:ListTagsForResource")
	add("ingest", []string{tableARN(schema.TableDeadLetters)}, "dynamodb:PutItem")
	add("ingest", []string{"arn:fake:aws_secretsmanager_secret.github_webhook", "arn:fake:aws_secretsmanager_secret.ingest_token"}, "secretsmanager:GetSecretValue")
	add("ingest", queue("ingest"), "sqs:SendMessage")
	add("api", projTables, "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query")
	add("api", projIndexes, "dynamodb:Query")
	add("api", []string{events}, "dynamodb:Query")
	add("api", []string{tableARN(schema.TableWorkflowRuns), tableARN(schema.TableWorkflowJobs)}, "dynamodb:Scan") // query.Client.Observed's bounded samples
	add("api", []string{tableARN(schema.TableCheckpoints), tableARN(schema.TableDeadLetters)}, "dynamodb:Query")
	add("api", []string{"arn:fake:aws_secretsmanager_secret.api_token", "arn:fake:aws_secretsmanager_secret.cursor_key"}, "secretsmanager:GetSecretValue")
	// Reconcile (package reconcile, cmd/reconcile): a Scan of the event
	// table, projector.Check's BatchGetItem of the folded states, the
	// operations records (opsrec: Gaps' Query, PutResult's PutItem), the
	// archive read through the catalog (GetTable, GetObject, ListBucket for
	// 404s).
	add("reconcile", []string{events}, "dynamodb:Scan")
	add("reconcile", []string{tableARN(schema.TableAggregates)}, "dynamodb:BatchGetItem")
	add("reconcile", []string{tableARN(schema.TableCheckpoints)}, "dynamodb:PutItem", "dynamodb:Query")
	add("reconcile", []string{"arn:fake:aws_s3_bucket.archive/archive/*"}, "s3:GetObject")
	add("reconcile", []string{"arn:fake:aws_s3_bucket.archive"}, "s3:ListBucket")
	add("reconcile", tables, "glue:GetTable")
	if heal {
		// The events to heal read by key; the projector's commit (as the
		// projector, without dead letters: heal feeds only missing events);
		// the archiver's batch (as the archiver, without listing tables).
		add("reconcile", []string{events}, "dynamodb:BatchGetItem")
		add("reconcile", []string{tableARN(schema.TableAggregates)}, "dynamodb:PutItem")
		add("reconcile", projTables, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem")
		add("reconcile", []string{"arn:fake:aws_s3_bucket.archive/archive/*"}, "s3:PutObject", "s3:DeleteObject")
		add("reconcile", []string{glueCatalogARN, glueDatabase}, "glue:GetDatabase")
		add("reconcile", tables, "glue:CreateTable", "glue:UpdateTable")
	}
	for _, fn := range []string{"projector", "archiver", "ingest", "api", "reconcile"} {
		add(fn, logs(fn), "logs:CreateLogStream", "logs:PutLogEvents")
	}
	return g
}

func TestIAM(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	if n := len(statements(ev)); n < 5 {
		t.Fatalf("only %d policy documents evaluated", n)
	}
	for _, e := range checkIAM(ev, expectedGrants()) {
		t.Error(e)
	}
}

// TestIAMReconcileHeal: with reconcile_heal = true, reconcile's policy
// grants exactly the read grants plus the consumers' writes heal uses; the
// default (false) grants no write but its own result (TestIAM).
func TestIAMReconcileHeal(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"reconcile_heal": cty.True}})
	for _, e := range checkIAM(ev, expectedGrantsHealing(true)) {
		t.Error(e)
	}
	// Without heal, no write action on anything but the checkpoints table
	// (its result) and its own log group.
	_, ev = loadEvaluated(t, evalOptions{})
	for _, st := range statements(ev)["reconcile"] {
		for _, a := range st.actions {
			if !strings.Contains(a, "Put") && !strings.Contains(a, "Update") && !strings.Contains(a, "Delete") && !strings.Contains(a, "Create") {
				continue
			}
			for _, r := range st.resources {
				if r != tableARN(schema.TableCheckpoints) && !strings.HasPrefix(r, `arn:fake:aws_cloudwatch_log_group.function["reconcile"]`) {
					t.Errorf("reconcile_heal = false: statement %q grants %s on %s", st.sid, a, r)
				}
			}
		}
	}
}

// TestIAMCatchesProblems mutates iam.tf and expects checkIAM to name each
// problem.
func TestIAMCatchesProblems(t *testing.T) {
	files := readConfigFiles(t)
	tests := []struct {
		name, file, from, to string
		want                 []string
	}{
		{
			name: "shared role",
			file: "terraform/lambda.tf",
			from: `role             = aws_iam_role.function[each.key].arn`,
			to:   `role             = aws_iam_role.function["projector"].arn`,
			want: []string{
				`aws_lambda_function.function["api"]: role "arn:fake:aws_iam_role.function[\"projector\"]", want its own role arn:fake:aws_iam_role.function["api"]`,
				`aws_lambda_function.function["archiver"]: role "arn:fake:aws_iam_role.function[\"projector\"]", want its own role arn:fake:aws_iam_role.function["archiver"]`,
				`aws_lambda_function.function["api"] and aws_lambda_function.function["archiver"] share the role arn:fake:aws_iam_role.function["projector"]`,
				`aws_lambda_function.function["ingest"]: role "arn:fake:aws_iam_role.function[\"projector\"]", want its own role arn:fake:aws_iam_role.function["ingest"]`,
				`aws_lambda_function.function["api"] and aws_lambda_function.function["ingest"] share the role arn:fake:aws_iam_role.function["projector"]`,
				`aws_lambda_function.function["api"] and aws_lambda_function.function["projector"] share the role arn:fake:aws_iam_role.function["projector"]`,
				`aws_lambda_function.function["reconcile"]: role "arn:fake:aws_iam_role.function[\"projector\"]", want its own role arn:fake:aws_iam_role.function["reconcile"]`,
				`aws_lambda_function.function["api"] and aws_lambda_function.function["reconcile"] share the role arn:fake:aws_iam_role.function["projector"]`,
			},
		},
		{
			name: "wildcard action",
			from: `sid       = "PutDeadLetters"
    actions   = ["dynamodb:PutItem"]`,
			to: `sid       = "PutDeadLetters"
    actions   = ["dynamodb:*"]`,
			want: []string{
				`data.aws_iam_policy_document.projector statement "PutDeadLetters": action "dynamodb:*" is not one exact action (no wildcards)`,
				"projector: policy lacks dynamodb:PutItem on arn:fake:aws_dynamodb_table.table[\"dead-letters\"], which cmd/projector uses",
				"projector: policy grants dynamodb:* on arn:fake:aws_dynamodb_table.table[\"dead-letters\"], which cmd/projector does not use",
			},
		},
		{
			name: "star resource",
			from: `resources = [aws_dynamodb_table.table["events"].arn]
  }

  statement {
    sid     = "StateMachineTags"`,
			to: `resources = ["*"]
  }

  statement {
    sid     = "StateMachineTags"`,
			want: []string{
				`data.aws_iam_policy_document.ingest statement "AppendEvents": resource "*"`,
				"ingest: policy lacks dynamodb:PutItem on arn:fake:aws_dynamodb_table.table[\"events\"], which cmd/ingest uses",
				"ingest: policy grants dynamodb:PutItem on *, which cmd/ingest does not use",
			},
		},
		{
			name: "index wildcard where index ARNs exist",
			from: `resources = local.projection_index_arns`,
			to:   `resources = concat(local.projection_index_arns, ["${aws_dynamodb_table.table["executions"].arn}/index/*"])`,
			want: []string{
				`data.aws_iam_policy_document.api statement "QueryProjectionIndexes": wildcard resource "arn:fake:aws_dynamodb_table.table[\"executions\"]/index/*" is not in iam_test.go's allow-list`,
				"api: policy grants dynamodb:Query on arn:fake:aws_dynamodb_table.table[\"executions\"]/index/*, which cmd/api does not use",
			},
		},
		{
			name: "a table the function does not use",
			from: `resources = [aws_dynamodb_table.table["dead-letters"].arn]
  }`,
			to: `resources = [aws_dynamodb_table.table["dead-letters"].arn, aws_dynamodb_table.table["events"].arn]
  }`,
			want: []string{"projector: policy grants dynamodb:PutItem on arn:fake:aws_dynamodb_table.table[\"events\"], which cmd/projector does not use"},
		},
		{
			name: "a Glue table that is not the archive's",
			file: "terraform/archive.tf",
			from: `glue_table_arns = [for name in sort(keys(local.iceberg.tables)) :`,
			to:   `glue_table_arns = [for name in concat(sort(keys(local.iceberg.tables)), ["other"]) :`,
			want: []string{
				`data.aws_iam_policy_document.archiver statement "GlueArchiveTables": resource "arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other" is not the ARN of a resource this configuration manages (nor in iam_test.go's unmanagedAllowed)`,
				"archiver: policy grants glue:CreateTable on arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other, which cmd/archiver does not use",
				"archiver: policy grants glue:GetTable on arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other, which cmd/archiver does not use",
				"archiver: policy grants glue:UpdateTable on arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other, which cmd/archiver does not use",
				`data.aws_iam_policy_document.reconcile statement "GlueReadArchiveTables": resource "arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other" is not the ARN of a resource this configuration manages (nor in iam_test.go's unmanagedAllowed)`,
				"reconcile: policy grants glue:GetTable on arn:aws:glue:eu-west-1:123456789012:table/streamfold_dev_archive/other, which cmd/reconcile does not use",
			},
		},
		{
			name: "Glue tables by wildcard",
			from: `resources = concat([local.glue_catalog_arn, aws_glue_catalog_database.archive.arn], local.glue_table_arns)`,
			to:   `resources = [local.glue_catalog_arn, aws_glue_catalog_database.archive.arn, "${local.glue_arn_prefix}:table/*"]`,
			want: append(func() []string {
				var w []string
				for _, n := range archiveTableNames() {
					w = append(w, fmt.Sprintf("unmanagedAllowed entry archiver %q is not used by any policy: remove it", glueTableARN(n)))
				}
				for _, a := range []string{"glue:CreateTable", "glue:GetTable", "glue:UpdateTable"} {
					for _, n := range archiveTableNames() {
						w = append(w, fmt.Sprintf("archiver: policy lacks %s on %s, which cmd/archiver uses", a, glueTableARN(n)))
					}
				}
				return w
			}(),
				`data.aws_iam_policy_document.archiver statement "GlueArchiveTables": wildcard resource "arn:aws:glue:eu-west-1:123456789012:table/*" is not in iam_test.go's allow-list`,
				"archiver: policy grants glue:CreateTable on arn:aws:glue:eu-west-1:123456789012:table/*, which cmd/archiver does not use",
				"archiver: policy grants glue:GetTable on arn:aws:glue:eu-west-1:123456789012:table/*, which cmd/archiver does not use",
				"archiver: policy grants glue:UpdateTable on arn:aws:glue:eu-west-1:123456789012:table/*, which cmd/archiver does not use",
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.file == "" {
				tt.file = "terraform/iam.tf"
			}
			src := string(files[tt.file])
			if strings.Count(src, tt.from) != 1 {
				t.Fatalf("%s has %d occurrences of %q, want 1", tt.file, strings.Count(src, tt.from), tt.from)
			}
			ev := evaluateFiles(t, replaced(files, tt.file, tt.from, tt.to), evalOptions{})
			got := checkIAM(ev, expectedGrants())
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("checkIAM did not report\n  %s\nit reported\n  %s", w, strings.Join(got, "\n  "))
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("checkIAM reported %d problems, want %d:\n  %s", len(got), len(tt.want), strings.Join(got, "\n  "))
			}
		})
	}
}

// TestProjectionTablesLocal: local.projection_tables in main.tf holds
// exactly the tables projectionTables() derives from schema.Tables().
func TestProjectionTablesLocal(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{})
	var got, want []string
	for k := range ev.locals["projection_tables"].AsValueMap() {
		got = append(got, k)
	}
	for _, tb := range projectionTables() {
		want = append(want, tb.Logical)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("local.projection_tables has %v, schema.Tables() projection tables are %v", got, want)
	}
}
