package schema

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ScalarType is a DynamoDB scalar key attribute type.
type ScalarType string

// Key attribute types.
const (
	String ScalarType = "S"
	Number ScalarType = "N"
)

// KeyAttr is one key attribute.
type KeyAttr struct {
	Name string
	Type ScalarType
}

// Index is a global secondary index. Hash and Range hold up to four
// attributes each: DynamoDB's multi-attribute keys, used instead of
// concatenated strings such as "installation_id#status".
type Index struct {
	Name  string
	Hash  []KeyAttr
	Range []KeyAttr
}

// Table specifies one DynamoDB table: keys, indexes, TTL and stream. It is the
// single source of truth from which local tables are created and against
// which Terraform is checked.
type Table struct {
	// Logical is the short name, e.g. "events"; the physical name is
	// Naming.Table(Logical).
	Logical string
	// Doc says what the table holds and which seed it comes from.
	Doc     string
	Hash    KeyAttr
	Range   *KeyAttr
	Indexes []Index
	// TTLAttribute names the Number attribute holding the expiry epoch
	// seconds, "" when items never expire.
	TTLAttribute string
	// TTLDays is how long after creation an item expires (0 with no TTL).
	TTLDays int
	// StreamView is the DynamoDB Streams view type, "" when streams are off.
	StreamView types.StreamViewType
	// PITR reports whether point-in-time recovery is on in stage and prod
	// (it is always off in dev).
	PITR bool
}

// Logical table names.
const (
	TableEvents        = "events"
	TableExecutions    = "executions"
	TableWorkflows     = "workflows"
	TableWorkflowJobs  = "workflow-jobs"
	TableWorkflowRuns  = "workflow-runs"
	TableDeployments   = "deployments"
	TableMessages      = "messages"
	TableMetrics       = "metrics"
	TableDeadLetters   = "dead-letters"
	TableCheckpoints   = "checkpoints"
	TableAggregates    = "aggregates"
	EventRetentionDays = 14
	// DeadLetterRetentionDays is how long a dead letter is kept after it
	// was quarantined: time enough to be paged (every dead letter is a
	// metric with an alarm), look and replay.
	DeadLetterRetentionDays = 90
)

func s(name string) KeyAttr { return KeyAttr{Name: name, Type: String} }
func n(name string) KeyAttr { return KeyAttr{Name: name, Type: Number} }
func sp(name string) *KeyAttr {
	k := s(name)
	return &k
}

var tables = []Table{
	{
		Logical: TableEvents,
		Doc:     "The append-only event log: one item per event, keyed by subject (the aggregate) and id. Streams on; the projector and archiver read it.",
		Hash:    s("subject"), Range: sp("id"),
		TTLAttribute: "ttl", TTLDays: EventRetentionDays,
		StreamView: types.StreamViewTypeNewImage,
		PITR:       true,
	},
	{
		Logical: TableExecutions,
		Doc:     "Seed 000/002 execution index: agent Step Functions executions by ARN, agent and date, status and date.",
		Hash:    s("executionArn"),
		Indexes: []Index{
			{Name: "AgentDateIndex", Hash: []KeyAttr{s("agentName")}, Range: []KeyAttr{s("startDate")}},
			{Name: "StatusDateIndex", Hash: []KeyAttr{s("status")}, Range: []KeyAttr{s("startDate")}},
		},
	},
	{
		Logical: TableWorkflows,
		Doc:     "Seed 001 single table: sf/ldf executions, albums, validation tasks and daily metrics rows.",
		Hash:    s("pk"), Range: sp("sk"),
		Indexes: []Index{
			{Name: "GSI1", Hash: []KeyAttr{s("workflowType"), s("entityType")}, Range: []KeyAttr{s("status"), s("createdAt")}},
			{Name: "GSI2", Hash: []KeyAttr{s("workflowType"), s("executionId")}, Range: []KeyAttr{s("entityType"), n("sortValue")}},
		},
	},
	{
		Logical: TableWorkflowJobs,
		Doc:     "Seed 003 workflow_jobs: current state and complete metrics of each GitHub job, scoped by installation.",
		Hash:    s("pk"), Range: sp("sk"),
		Indexes: []Index{
			{Name: "GSI1", Hash: []KeyAttr{n("installation_id"), s("status")}, Range: []KeyAttr{s("created_at")}},
			{Name: "GSI2", Hash: []KeyAttr{n("installation_id"), s("repo_full_name")}, Range: []KeyAttr{s("created_at")}},
			{Name: "GSI3", Hash: []KeyAttr{n("installation_id"), n("run_id"), n("run_attempt")}, Range: []KeyAttr{s("created_at")}},
		},
		TTLAttribute: "ttl", TTLDays: 90,
	},
	{
		Logical: TableWorkflowRuns,
		Doc:     "Seed 003 workflow_runs. A run's summary (total, completed and failed jobs, status, conclusion) is summed on read from its jobs' workflow-jobs items (GSI3); this table keeps what older projectors wrote (one row per run, sk v, or each job's share, sk job#<id>), summed with them, and the empty shares of a job named in two runs.",
		Hash:    s("pk"), Range: sp("sk"),
		TTLAttribute: "ttl", TTLDays: 90,
	},
	{
		Logical: TableDeployments,
		Doc:     "Seed 003 deployments: approval status of GitHub deployments.",
		Hash:    s("pk"), Range: sp("sk"),
		TTLAttribute: "ttl", TTLDays: 90,
	},
	{
		Logical: TableMessages,
		Doc:     "Seed 004 rez_agent messages with stage, status and message_type indexes.",
		Hash:    s("message_id"),
		Indexes: []Index{
			{Name: "stage-created_date-index", Hash: []KeyAttr{s("stage")}, Range: []KeyAttr{s("created_date")}},
			{Name: "status-created_date-index", Hash: []KeyAttr{s("status")}, Range: []KeyAttr{s("created_date")}},
			{Name: "message_type-created_date-index", Hash: []KeyAttr{s("message_type")}, Range: []KeyAttr{s("created_date")}},
		},
		TTLAttribute: "ttl", TTLDays: 90,
		PITR: true,
	},
	{
		Logical: TableMetrics,
		Doc:     "Daily counter rows that are not sf/ldf workflow metrics: per-stage message counts by status (seed 004), keyed by scope and date.",
		Hash:    s("scope"), Range: sp("date"),
	},
	{
		Logical: TableDeadLetters,
		Doc:     "Records a consumer could not process: the raw record, the error and its stream position, for a person to inspect and replay.",
		Hash:    s("consumer"), Range: sp("position"),
		TTLAttribute: "ttl", TTLDays: DeadLetterRetentionDays,
		PITR: true,
	},
	{
		Logical: TableAggregates,
		Doc:     "The projector's folded state per subject (JSON) with a version for optimistic concurrency; projections are derived from it.",
		Hash:    s("subject"),
	},
	{
		Logical: TableCheckpoints,
		Doc:     "Per-shard stream checkpoints of the local stream runner, and the operations records (gaps the consumers noticed, reconcile results; internal/opsrec).",
		Hash:    s("consumer"), Range: sp("shard_id"),
	},
}

// Tables returns every table specification, in a stable order.
func Tables() []Table {
	out := make([]Table, len(tables))
	copy(out, tables)
	return out
}

// TableSpec returns the specification of a logical table.
func TableSpec(logical string) (Table, bool) {
	for _, t := range tables {
		if t.Logical == logical {
			return t, true
		}
	}
	return Table{}, false
}

// Key returns the primary-key attributes of item (hash, then range when
// the table has one) and whether item holds all of them.
func (t Table) Key(item map[string]types.AttributeValue) (map[string]types.AttributeValue, bool) {
	h, ok := item[t.Hash.Name]
	if !ok {
		return nil, false
	}
	if t.Range == nil {
		return map[string]types.AttributeValue{t.Hash.Name: h}, true
	}
	r, ok := item[t.Range.Name]
	if !ok {
		return nil, false
	}
	return map[string]types.AttributeValue{t.Hash.Name: h, t.Range.Name: r}, true
}

// Naming turns logical table names into physical ones: "<prefix>-<stage>-<logical>".
type Naming struct {
	Prefix string // default "streamfold"
	Stage  string // dev, stage or prod
}

var prefixRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Validate names the bad field.
func (n Naming) Validate() error {
	if !prefixRE.MatchString(n.Prefix) {
		return fmt.Errorf("schema: Naming.Prefix: must be 1-63 lowercase letters, digits or '-', got %q", n.Prefix)
	}
	for _, st := range Stages {
		if n.Stage == st {
			return nil
		}
	}
	return fmt.Errorf("schema: Naming.Stage: must be one of dev, stage, prod, got %q", n.Stage)
}

// Table returns the physical name of a logical table.
func (n Naming) Table(logical string) string { return n.Prefix + "-" + n.Stage + "-" + logical }

// BucketName returns the archive bucket's default name.
func (n Naming) BucketName() string { return n.Prefix + "-" + n.Stage + "-archive" }

// CreateTableInput builds the CreateTable request for the table, on-demand
// and, where the spec says so, with streams on. TTL and PITR are separate
// calls (UpdateTimeToLive, UpdateContinuousBackups).
func (t Table) CreateTableInput(name string) *dynamodb.CreateTableInput {
	attrs := map[string]ScalarType{t.Hash.Name: t.Hash.Type}
	ks := []types.KeySchemaElement{{AttributeName: aws.String(t.Hash.Name), KeyType: types.KeyTypeHash}}
	if t.Range != nil {
		attrs[t.Range.Name] = t.Range.Type
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(t.Range.Name), KeyType: types.KeyTypeRange})
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range t.Indexes {
		var iks []types.KeySchemaElement
		for _, k := range ix.Hash {
			attrs[k.Name] = k.Type
			iks = append(iks, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: types.KeyTypeHash})
		}
		for _, k := range ix.Range {
			attrs[k.Name] = k.Type
			iks = append(iks, types.KeySchemaElement{AttributeName: aws.String(k.Name), KeyType: types.KeyTypeRange})
		}
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  iks,
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	names := make([]string, 0, len(attrs))
	for a := range attrs {
		names = append(names, a)
	}
	sort.Strings(names)
	defs := make([]types.AttributeDefinition, 0, len(names))
	for _, a := range names {
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeType(attrs[a])})
	}
	in := &dynamodb.CreateTableInput{
		TableName:              aws.String(name),
		AttributeDefinitions:   defs,
		KeySchema:              ks,
		GlobalSecondaryIndexes: gsis,
		BillingMode:            types.BillingModePayPerRequest,
	}
	if t.StreamView != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: t.StreamView}
	}
	return in
}
