// Package provision creates streamfold's DynamoDB tables from the schema
// specifications: for local stacks and tests (Terraform does it in AWS).
//
// Ensure is idempotent: an existing table is left as it is (it is not
// compared with the spec; the Terraform drift tests do that for AWS).
package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
	"github.com/streamfold/streamfold/schema"
)

// API is the part of the DynamoDB client Ensure uses.
type API interface {
	ddbapi.TableMaker
}

// Result says what Ensure did with one table.
type Result struct {
	Logical, Name string
	Created       bool
	// StreamARN is the table's latest stream ARN, when streams are on.
	StreamARN string
}

// Ensure creates every table of schema.Tables() that does not exist yet,
// waits until each is ACTIVE and turns TTL on where the spec has it.
func Ensure(ctx context.Context, api API, n schema.Naming) ([]Result, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	var out []Result
	for _, t := range schema.Tables() {
		r, err := ensureTable(ctx, api, t, n.Table(t.Logical))
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func ensureTable(ctx context.Context, api API, t schema.Table, name string) (Result, error) {
	r := Result{Logical: t.Logical, Name: name}
	_, err := api.CreateTable(ctx, t.CreateTableInput(name))
	var inUse *types.ResourceInUseException
	switch {
	case err == nil:
		r.Created = true
	case errors.As(err, &inUse):
	default:
		return r, fmt.Errorf("provision: create table %s: %w", name, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return r, fmt.Errorf("provision: describe table %s: %w", name, err)
		}
		if d.Table.TableStatus == types.TableStatusActive {
			r.StreamARN = aws.ToString(d.Table.LatestStreamArn)
			break
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("provision: table %s not ACTIVE after 2m (status %s)", name, d.Table.TableStatus)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if t.TTLAttribute != "" && r.Created {
		_, err := api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName:               aws.String(name),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(t.TTLAttribute), Enabled: aws.Bool(true)},
		})
		if err != nil {
			return r, fmt.Errorf("provision: enable TTL on %s: %w", name, err)
		}
	}
	return r, nil
}
