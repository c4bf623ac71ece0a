package devstack

import (
	"net"
	"path/filepath"
	"strconv"
)

// Service names; they also name the pid and log files in Config.StateDir.
const (
	NameDynamoDB = "dynamodb-local"
	NameMinIO    = "minio"
)

// launchSpec is everything needed to start one service: the decision part of
// Up, kept free of side effects so tests can assert it exactly.
type launchSpec struct {
	Name string
	// Path is the executable handed to exec ("java" is looked up on PATH).
	Path string
	// Args is the full argv, Args[0] included. It is recorded in the pid file and
	// compared with /proc/PID/cmdline before Down signals anything.
	Args []string
	// Env is added to the inherited environment (later entries win).
	Env []string
	// Files must exist before starting; if one does not, the tool is not installed.
	Files []string
}

// dynamoDBSpec builds the DynamoDB Local command line.
//
// DynamoDB Local 3.3.1 has no option to choose the listen address (see its
// -help: -port, -inMemory, -sharedDb, -dbPath, -cors, -delayTransientStatuses,
// -disableTelemetry, -optimizeDbBeforeStartup, -version): it listens on all
// interfaces. We only ever connect through Config.Host (loopback), and the
// machine's network is not reachable from outside anyway.
//
//   - -inMemory: tables vanish when it stops (tests create what they need).
//   - -sharedDb: one database for every access key and region, so the CLI, tests
//     and SDK clients with any credentials see the same tables.
//   - -disableTelemetry (and DDB_LOCAL_TELEMETRY=0): otherwise it tries to send
//     usage data to AWS, which must not leave this machine.
func dynamoDBSpec(c Config) launchSpec {
	dir := filepath.Join(c.ToolsDir, "dynamodb-local")
	jar := filepath.Join(dir, "DynamoDBLocal.jar")
	lib := filepath.Join(dir, "DynamoDBLocal_lib")
	return launchSpec{
		Name: NameDynamoDB,
		Path: "java",
		Args: []string{
			"java",
			"-Djava.library.path=" + lib,
			"-jar", jar,
			"-inMemory",
			"-sharedDb",
			"-disableTelemetry",
			"-port", strconv.Itoa(c.DynamoDBPort),
		},
		Env:   []string{"DDB_LOCAL_TELEMETRY=0"},
		Files: []string{jar, lib},
	}
}

// minioSpec builds the MinIO command line: S3 API on Host:S3Port, console on
// Host:S3Port+1 (browser UI off), root credentials from the config, no update
// checks or call-home.
func minioSpec(c Config) launchSpec {
	bin := filepath.Join(c.ToolsDir, "bin", "minio")
	return launchSpec{
		Name: NameMinIO,
		Path: bin,
		Args: []string{
			bin, "server", c.DataDir,
			"--address", net.JoinHostPort(c.Host, strconv.Itoa(c.S3Port)),
			"--console-address", net.JoinHostPort(c.Host, strconv.Itoa(c.S3Port+1)),
		},
		Env: []string{
			"MINIO_ROOT_USER=" + c.S3AccessKey,
			"MINIO_ROOT_PASSWORD=" + c.S3SecretKey,
			"MINIO_BROWSER=off",
			"MINIO_UPDATE=off",
			"MINIO_CALLHOME_ENABLE=off",
		},
		Files: []string{bin},
	}
}

// pidFile and logFile are where a service's state lives in StateDir.
func pidFile(c Config, name string) string { return filepath.Join(c.StateDir, name+".pid") }
func logFile(c Config, name string) string { return filepath.Join(c.StateDir, name+".log") }
