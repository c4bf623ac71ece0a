package provision_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/laptop/testenv"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
)

// TestEnsureMatchesSpecs creates every table on DynamoDB Local, checks that
// what DynamoDB describes (keys, multi-attribute GSI keys, stream, TTL)
// equals the spec, and that a second Ensure creates nothing.
func TestEnsureMatchesSpecs(t *testing.T) {
	c := testenv.Clients(t)
	n, first := testenv.Tables(t, c)
	ctx := context.Background()
	for _, r := range first {
		if !r.Created {
			t.Errorf("%s: not created on first Ensure", r.Name)
		}
	}
	for _, spec := range schema.Tables() {
		name := n.Table(spec.Logical)
		d, err := c.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("describe %s: %v", name, err)
		}
		want := spec.CreateTableInput(name)
		if got, w := keys(d.Table.KeySchema), keys(want.KeySchema); got != w {
			t.Errorf("%s key schema = %s, want %s", name, got, w)
		}
		gotIx := map[string]string{}
		for _, ix := range d.Table.GlobalSecondaryIndexes {
			gotIx[aws.ToString(ix.IndexName)] = keys(ix.KeySchema)
		}
		for _, ix := range want.GlobalSecondaryIndexes {
			if gotIx[aws.ToString(ix.IndexName)] != keys(ix.KeySchema) {
				t.Errorf("%s index %s = %q, want %q", name, aws.ToString(ix.IndexName), gotIx[aws.ToString(ix.IndexName)], keys(ix.KeySchema))
			}
		}
		if len(gotIx) != len(want.GlobalSecondaryIndexes) {
			t.Errorf("%s has %d indexes, want %d", name, len(gotIx), len(want.GlobalSecondaryIndexes))
		}
		streamOn := d.Table.StreamSpecification != nil && aws.ToBool(d.Table.StreamSpecification.StreamEnabled)
		if streamOn != (spec.StreamView != "") {
			t.Errorf("%s stream enabled = %v, want %v", name, streamOn, spec.StreamView != "")
		}
		ttl, err := c.DynamoDB.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("describe TTL %s: %v", name, err)
		}
		gotTTL := ""
		if ttl.TimeToLiveDescription != nil && ttl.TimeToLiveDescription.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
			gotTTL = aws.ToString(ttl.TimeToLiveDescription.AttributeName)
		}
		if gotTTL != spec.TTLAttribute {
			t.Errorf("%s TTL attribute = %q, want %q", name, gotTTL, spec.TTLAttribute)
		}
	}
	again, err := provision.Ensure(ctx, c.DynamoDB, n)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	for _, r := range again {
		if r.Created {
			t.Errorf("%s: created again on second Ensure", r.Name)
		}
	}
}

func keys(ks []types.KeySchemaElement) string {
	out := ""
	for _, k := range ks {
		out += aws.ToString(k.AttributeName) + ":" + string(k.KeyType) + " "
	}
	return out
}
