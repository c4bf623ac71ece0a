package seed003

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/streamfold/streamfold/internal/ddbapi"
)

// Tables are the physical names of seed 003's four tables.
type Tables struct {
	Jobs        string // workflow_jobs
	JobEvents   string // workflow_job_events
	Runs        string // workflow_runs
	Deployments string // deployments
}

// NewTables names the tables prefix + the seed's table name.
func NewTables(prefix string) Tables {
	return Tables{
		Jobs:        prefix + "workflow_jobs",
		JobEvents:   prefix + "workflow_job_events",
		Runs:        prefix + "workflow_runs",
		Deployments: prefix + "deployments",
	}
}

// Names returns the four names.
func (t Tables) Names() []string { return []string{t.Jobs, t.JobEvents, t.Runs, t.Deployments} }

// The seed's key and index attributes.
const (
	attrPK      = "PK"
	attrSK      = "SK"
	attrTTL     = "ttl"
	attrCreated = "created_at"
	gsi1PK      = "GSI1PK" // installation_id#status
	gsi2PK      = "GSI2PK" // installation_id#repo_full_name
	gsi3PK      = "GSI3PK" // installation_id#run_id#run_attempt
)

// Retention of each table, from the seed: 90 days, 14 for the events.
const (
	jobTTL   = 90 * 24 * time.Hour
	eventTTL = 14 * 24 * time.Hour
)

// CreateTableInputs returns the CreateTable requests of the four tables as
// the seed defines them (on-demand).
func (t Tables) CreateTableInputs() []*dynamodb.CreateTableInput {
	str := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	keys := func(hash, rng string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange},
		}
	}
	simple := func(name string) *dynamodb.CreateTableInput {
		return &dynamodb.CreateTableInput{
			TableName:            aws.String(name),
			AttributeDefinitions: []types.AttributeDefinition{str(attrPK), str(attrSK)},
			KeySchema:            keys(attrPK, attrSK),
			BillingMode:          types.BillingModePayPerRequest,
		}
	}
	jobs := simple(t.Jobs)
	jobs.AttributeDefinitions = append(jobs.AttributeDefinitions, str(attrCreated), str(gsi1PK), str(gsi2PK), str(gsi3PK))
	for i, pk := range []string{gsi1PK, gsi2PK, gsi3PK} {
		jobs.GlobalSecondaryIndexes = append(jobs.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(fmt.Sprintf("GSI%d", i+1)),
			KeySchema:  keys(pk, attrCreated),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return []*dynamodb.CreateTableInput{jobs, simple(t.JobEvents), simple(t.Runs), simple(t.Deployments)}
}

// CreateAPI is the part of the DynamoDB client Create uses.
type CreateAPI interface {
	ddbapi.TableMaker
}

// Create creates the four tables, waits until they are active and turns
// TTL on (attribute "ttl").
func (t Tables) Create(ctx context.Context, api CreateAPI) error {
	for _, in := range t.CreateTableInputs() {
		if _, err := api.CreateTable(ctx, in); err != nil {
			return fmt.Errorf("seed003: create %s: %w", *in.TableName, err)
		}
		w := dynamodb.NewTableExistsWaiter(api)
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, time.Minute); err != nil {
			return fmt.Errorf("seed003: wait for %s: %w", *in.TableName, err)
		}
		if _, err := api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName:               in.TableName,
			TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrTTL), Enabled: aws.Bool(true)},
		}); err != nil {
			return fmt.Errorf("seed003: ttl of %s: %w", *in.TableName, err)
		}
	}
	return nil
}
