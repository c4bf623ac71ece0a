// Package localstack provides the local stack's workflows of "streamfold
// dev": start DynamoDB Local and MinIO (or a local filesystem warehouse for
// the archive) on 127.0.0.1 and create every table and the archive bucket
// (Up), say what is running (Status), and stop what Up started (Down).
//
// The processes are internal/laptop/devstack's; this package adds the
// tables, the archive bucket, the archive mode recorded in the state
// directory and the export line other commands and tests read. Up is safe
// to repeat: it reuses what answers and creates only what is missing.
package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/streamfold/streamfold/archiver/s3fs"
	"github.com/streamfold/streamfold/internal/laptop/devstack"
	"github.com/streamfold/streamfold/schema"
	"github.com/streamfold/streamfold/schema/provision"
	"github.com/streamfold/streamfold/toolkit"
	"github.com/streamfold/streamfold/toolkit/conn"
)

// The archive of the local stack: MinIO, or a local filesystem warehouse.
const (
	ArchiveMinIO = "minio"
	ArchiveFS    = "fs"
)

// ErrToolMissing is wrapped by Up's error when a tool of "make tools" is
// not installed.
var ErrToolMissing = devstack.ErrToolMissing

// Options are one dev command's settings.
type Options struct {
	// Stack is where the tools and state are and the services' ports;
	// Validate applies its defaults.
	Stack devstack.Config
	// Prefix and Stage name the tables Up creates.
	Prefix, Stage string
	// Archive is ArchiveMinIO or ArchiveFS; empty is what the state
	// directory's last Up recorded, else ArchiveMinIO.
	Archive string
}

// Validate applies the stack's defaults and checks the options.
func (o *Options) Validate() error {
	o.Stack.SetDefaults()
	if err := o.Stack.Validate(); err != nil {
		return toolkit.Invalid("dev", "Stack", err, "")
	}
	if err := (schema.Naming{Prefix: o.Prefix, Stage: o.Stage}).Validate(); err != nil {
		return toolkit.Invalid("dev", "Prefix", err, "")
	}
	mode, err := ArchiveMode(o.Stack.StateDir, o.Archive)
	if err != nil {
		return toolkit.Invalid("dev", "Archive", err, "")
	}
	o.Archive, o.Stack.SkipMinIO = mode, mode == ArchiveFS
	return nil
}

// Report is what a dev command found or made, its JSON.
type Report struct {
	DynamoDB devstack.Service `json:"dynamodb"`
	S3       devstack.Service `json:"s3"`
	// ArchiveDir is the local filesystem warehouse (ArchiveFS; empty
	// with MinIO).
	ArchiveDir string             `json:"archive_dir,omitempty"`
	Tables     []provision.Result `json:"tables,omitempty"`
	Bucket     string             `json:"bucket,omitempty"`
	Export     map[string]string  `json:"export,omitempty"`
}

// Healthy reports whether the services the archive mode needs are running.
func (r *Report) Healthy() bool {
	return r.DynamoDB.Running && (r.S3.Running || r.ArchiveDir != "")
}

// Up starts the stack, creates the tables and the archive bucket, and
// records the archive mode. When a tool is not installed its error wraps
// ErrToolMissing and toolkit.ErrInvalidOptions.
func Up(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	st, err := devstack.Up(ctx, o.Stack)
	if errors.Is(err, devstack.ErrToolMissing) {
		return nil, toolkit.Invalid("dev", "Stack.ToolsDir", err, "")
	} else if err != nil {
		return nil, err
	}
	rep, err := prepare(ctx, st, o)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(modeFile(o.Stack.StateDir), []byte(o.Archive+"\n"), 0o644); err != nil {
		return nil, err
	}
	return rep, nil
}

// Status checks what is running.
func Status(ctx context.Context, o Options) (*Report, error) { return follow(ctx, o, devstack.Check) }

// Down stops the processes Up started (and nothing else).
func Down(ctx context.Context, o Options) (*Report, error) { return follow(ctx, o, devstack.Down) }

func follow(ctx context.Context, o Options, do func(context.Context, devstack.Config) (devstack.Status, error)) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	st, err := do(ctx, o.Stack)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	return rep, rep.services(st, o)
}

func (r *Report) services(st devstack.Status, o Options) (err error) {
	r.DynamoDB, r.S3 = st.DynamoDB, st.S3
	if o.Archive == ArchiveFS {
		r.ArchiveDir, err = filepath.Abs(WarehouseDir(o.Stack.StateDir))
	}
	return err
}

// prepare creates the tables and the archive bucket and the export line.
func prepare(ctx context.Context, st devstack.Status, o Options) (*Report, error) {
	rep := &Report{}
	if err := rep.services(st, o); err != nil {
		return nil, err
	}
	s := conn.Settings{DynamoDBEndpoint: st.DynamoDB.Endpoint, S3Endpoint: st.S3.Endpoint, Region: "us-east-1",
		S3AccessKey: o.Stack.S3AccessKey, S3SecretKey: o.Stack.S3SecretKey, Prefix: o.Prefix, Stage: o.Stage}
	n, err := s.Naming()
	if err != nil {
		return nil, err
	}
	c, err := s.Clients(ctx)
	if err != nil {
		return nil, err
	}
	if rep.Tables, err = provision.Ensure(ctx, c.DynamoDB, n); err != nil {
		return nil, err
	}
	rep.Bucket = n.BucketName()
	rep.Export = map[string]string{"STREAMFOLD_DYNAMODB_ENDPOINT": st.DynamoDB.Endpoint, "STREAMFOLD_PREFIX": o.Prefix, "STREAMFOLD_STAGE": o.Stage}
	if o.Archive == ArchiveFS {
		return rep, rep.warehouse()
	}
	if _, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(rep.Bucket)}); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		var exists *s3types.BucketAlreadyExists
		if !errors.As(err, &owned) && !errors.As(err, &exists) {
			return nil, fmt.Errorf("create bucket %s: %w", rep.Bucket, err)
		}
	}
	rep.Export["STREAMFOLD_S3_ENDPOINT"] = st.S3.Endpoint
	// The archive's Iceberg catalog lives beside MinIO's data, in the state
	// directory: both persist across dev down and up, and go together.
	rep.Export["STREAMFOLD_CATALOG"], err = conn.LocalCatalogURI(o.Stack.StateDir)
	return rep, err
}

// warehouse makes the archive bucket in the local filesystem warehouse
// (ArchiveFS) and names it in the export line.
func (r *Report) warehouse() error {
	store, err := s3fs.New(r.ArchiveDir)
	if err != nil {
		return err
	}
	if err := store.CreateBucket(r.Bucket); err != nil {
		return err
	}
	r.Export["STREAMFOLD_ARCHIVE_DIR"] = r.ArchiveDir
	r.Export["STREAMFOLD_CATALOG"] = "sqlite:" + filepath.Join(r.ArchiveDir, "catalog.db")
	return nil
}

// WarehouseDir is the local filesystem warehouse of a state dir: the
// buckets' directories and the SQLite catalog (catalog.db).
func WarehouseDir(stateDir string) string { return filepath.Join(stateDir, "warehouse") }

// modeFile records the last Up's archive mode in the state dir.
func modeFile(stateDir string) string { return filepath.Join(stateDir, "archive") }

// ArchiveMode is mode if set (ArchiveMinIO or ArchiveFS), else what the
// state dir's last Up recorded, else ArchiveMinIO.
func ArchiveMode(stateDir, mode string) (string, error) {
	switch mode {
	case ArchiveMinIO, ArchiveFS:
		return mode, nil
	case "":
	default:
		return "", fmt.Errorf("%q: want minio or fs", mode)
	}
	b, err := os.ReadFile(modeFile(stateDir))
	if err == nil && strings.TrimSpace(string(b)) == ArchiveFS {
		return ArchiveFS, nil
	}
	return ArchiveMinIO, nil
}

// WriteText prints the report for people: a line per service, the
// warehouse, and after up the tables, the bucket and the export line.
// stopped says the services were just stopped (dev down).
func (r *Report) WriteText(w io.Writer, stopped bool) error {
	var b strings.Builder
	services := []devstack.Service{r.DynamoDB, r.S3}
	if r.ArchiveDir != "" && !r.S3.Running {
		services = services[:1]
	}
	for _, s := range services {
		state := "not running"
		switch {
		case s.Running && s.StartedByUs:
			state = "running, pid " + strconv.Itoa(s.PID)
		case s.Running:
			state = "running (not started by streamfold)"
		case stopped:
			state = "stopped"
		}
		fmt.Fprintf(&b, "%-9s %-24s %s\n", s.Name, s.Endpoint, state)
	}
	if r.ArchiveDir != "" {
		fmt.Fprintf(&b, "%-9s %s (a local filesystem warehouse, no MinIO)\n", "archive", r.ArchiveDir)
	}
	if len(r.Tables) > 0 {
		created := 0
		for _, t := range r.Tables {
			if t.Created {
				created++
			}
		}
		fmt.Fprintf(&b, "tables    %d ready (%d created), e.g. %s\n", len(r.Tables), created, r.Tables[0].Name)
		fmt.Fprintf(&b, "bucket    %s\n", r.Bucket)
		fmt.Fprintf(&b, "\n%s\n", ExportLine(r.Export))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ExportLine renders the variables other commands and the tests read, in
// a fixed order, as one shell export line.
func ExportLine(vars map[string]string) string {
	line := "export"
	for _, k := range []string{"STREAMFOLD_DYNAMODB_ENDPOINT", "STREAMFOLD_S3_ENDPOINT", "STREAMFOLD_ARCHIVE_DIR", "STREAMFOLD_PREFIX", "STREAMFOLD_STAGE", "STREAMFOLD_CATALOG"} {
		if v, ok := vars[k]; ok {
			line += " " + k + "=" + v
		}
	}
	return line
}
