package terraform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// checkFailuresBucket reports what is missing from the on-failure bucket
// (onfailure.tf): private, encrypted, TLS only, failed batches expiring
// after var.failures_retention_days, and the mappings created only once
// the roles may write to it.
func checkFailuresBucket(ev *evaluated) []string {
	var errs []string
	const bucketID = "id:aws_s3_bucket.failures"
	one := func(typ string) cty.Value {
		var found []cty.Value
		for _, in := range ev.instancesOf("resource", typ) {
			if getStr(in.Obj, "bucket") == bucketID {
				found = append(found, in.Obj)
			}
		}
		if len(found) != 1 {
			errs = append(errs, fmt.Sprintf("%d %s of the failures bucket, want 1", len(found), typ))
			return cty.EmptyObjectVal
		}
		return found[0]
	}
	pab := one("aws_s3_bucket_public_access_block")
	for _, k := range []string{"block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"} {
		if v := attr(pab, k); v == nilValue || v.Type() != cty.Bool || !v.True() {
			errs = append(errs, "failures bucket public access block: "+k+" is not true")
		}
	}
	alg := ""
	for _, r := range blocks(one("aws_s3_bucket_server_side_encryption_configuration"), "rule") {
		for _, d := range blocks(r, "apply_server_side_encryption_by_default") {
			alg = getStr(d, "sse_algorithm")
		}
	}
	if alg != "AES256" {
		errs = append(errs, fmt.Sprintf("failures bucket encryption %q, want AES256 (aws:kms would need kms:GenerateDataKey for the mappings)", alg))
	}
	if got := getStr(one("aws_s3_bucket_policy"), "policy"); got != "json:data.aws_iam_policy_document.failures_bucket" {
		errs = append(errs, fmt.Sprintf("failures bucket policy %q, want the TLS-only document", got))
	}
	tls := false
	for _, st := range blocks(ev.data["aws_iam_policy_document"]["failures_bucket"], "statement") {
		res, _ := stringList(attr(st, "resources"))
		for _, c := range blocks(st, "condition") {
			if getStr(st, "effect") == "Deny" && getStr(c, "variable") == "aws:SecureTransport" &&
				strings.Join(res, ",") == "arn:fake:aws_s3_bucket.failures,arn:fake:aws_s3_bucket.failures/*" {
				tls = true
			}
		}
	}
	if !tls {
		errs = append(errs, "failures bucket policy: no statement denying requests without TLS on the bucket and its objects")
	}
	expiry := ""
	for _, r := range blocks(one("aws_s3_bucket_lifecycle_configuration"), "rule") {
		for _, f := range blocks(r, "filter") {
			for _, e := range blocks(r, "expiration") {
				if getStr(r, "status") == "Enabled" {
					expiry = fmt.Sprintf("%s after %s days", getStr(f, "prefix"), attr(e, "days").AsBigFloat().String())
				}
			}
		}
	}
	if want := fmt.Sprintf("aws/lambda/ after %s days", ev.vars["failures_retention_days"].AsBigFloat().String()); expiry != want {
		errs = append(errs, fmt.Sprintf("failures bucket lifecycle: expiry %q, want %q (var.failures_retention_days)", expiry, want))
	}
	return errs
}

func TestFailuresBucket(t *testing.T) {
	_, ev := loadEvaluated(t, evalOptions{Vars: map[string]cty.Value{"failures_retention_days": cty.NumberIntVal(30)}})
	for _, e := range checkFailuresBucket(ev) {
		t.Error(e)
	}
	if got := getStr(ev.resources["aws_s3_bucket"]["failures"], "bucket"); got != "streamfold-dev-failures" {
		t.Errorf("failures bucket name %q, want streamfold-dev-failures", got)
	}
	// The mappings are validated at creation: the roles' S3 grants
	// (iam_test.go checks them exactly) must exist first.
	cfg, _ := loadEvaluated(t, evalOptions{})
	for _, b := range cfg.find("resource", "aws_lambda_event_source_mapping") {
		dep, ok := b.Block.Body.Attributes["depends_on"]
		if !ok || !strings.Contains(string(readConfigFiles(t)[b.File][dep.SrcRange.Start.Byte:dep.SrcRange.End.Byte]), "aws_iam_role_policy.function") {
			t.Errorf("%s: depends_on must name aws_iam_role_policy.function (the mapping checks it may write to the on-failure bucket)", b.Addr())
		}
	}
}

// TestFailuresBucketCheckCatchesDrift mutates onfailure.tf.
func TestFailuresBucketCheckCatchesDrift(t *testing.T) {
	files := readConfigFiles(t)
	tests := []struct{ name, from, to, want string }{
		{"KMS", `sse_algorithm = "AES256"`, `sse_algorithm = "aws:kms"`, `failures bucket encryption "aws:kms", want AES256 (aws:kms would need kms:GenerateDataKey for the mappings)`},
		{"public", "restrict_public_buckets = true", "restrict_public_buckets = false", "failures bucket public access block: restrict_public_buckets is not true"},
		{"no expiry", `status = "Enabled"`, `status = "Disabled"`, `failures bucket lifecycle: expiry "", want "aws/lambda/ after 90 days" (var.failures_retention_days)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := strings.Count(string(files["terraform/onfailure.tf"]), tt.from); n != 1 {
				t.Fatalf("onfailure.tf has %d occurrences of %q, want 1", n, tt.from)
			}
			got := checkFailuresBucket(evaluateFiles(t, replaced(files, "terraform/onfailure.tf", tt.from, tt.to), evalOptions{}))
			if strings.Join(got, "\n") != tt.want {
				t.Errorf("reported\n  %s\nwant\n  %s", strings.Join(got, "\n  "), tt.want)
			}
		})
	}
}
