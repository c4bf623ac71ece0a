// Package devstack starts, checks and stops the local services that tests and
// `streamfold dev up|down|status` use: DynamoDB Local (with Streams) and MinIO
// as S3. Both are installed into .tools/ by `make tools` (.ci/tools.sh).
//
// Services we start run in their own process group with their output in
// StateDir/NAME.log, so they outlive the calling process; StateDir/NAME.pid
// records the pid and exact command line. Down only ever signals a process
// recorded there whose /proc/PID/cmdline still matches. A port that already
// answers like the expected service is reused, whoever started it.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Service describes one service as Up, Down or Check found or left it.
type Service struct {
	// Name is NameDynamoDB or NameMinIO.
	Name string
	// Endpoint is the URL clients use, e.g. "http://127.0.0.1:8766".
	Endpoint string
	// PID is the process recorded in our pid file and still alive with the
	// recorded command line; 0 if there is none (e.g. a service someone else started).
	PID int
	// Running reports that the endpoint answers like the service (DynamoDB
	// ListTables, MinIO /minio/health/live).
	Running bool
	// StartedByUs reports that PID is set: the process was started by this
	// package (in this or an earlier call) and Down will stop it.
	StartedByUs bool
	// LogFile is where the output of a process we start goes.
	LogFile string
}

// Status is the state of the whole stack.
type Status struct {
	DynamoDB Service
	S3       Service
}

// All returns the services in a fixed order (DynamoDB, S3), for printing.
func (s Status) All() []Service { return []Service{s.DynamoDB, s.S3} }

// Ready reports whether both services answer.
func (s Status) Ready() bool { return s.DynamoDB.Running && s.S3.Running }

// svc binds a launch spec to its probe and files for one Config.
type svc struct {
	spec     launchSpec
	endpoint string
	host     string
	port     int
	probe    func(ctx context.Context, endpoint string) error
	pidPath  string
	logPath  string
}

func services(c Config) [2]svc {
	return [2]svc{
		{spec: dynamoDBSpec(c), endpoint: c.DynamoDBEndpoint(), host: c.Host, port: c.DynamoDBPort,
			probe: probeDynamoDB, pidPath: pidFile(c, NameDynamoDB), logPath: logFile(c, NameDynamoDB)},
		{spec: minioSpec(c), endpoint: c.S3Endpoint(), host: c.Host, port: c.S3Port,
			probe: probeMinIO, pidPath: pidFile(c, NameMinIO), logPath: logFile(c, NameMinIO)},
	}
}

func status(s [2]Service) Status { return Status{DynamoDB: s[0], S3: s[1]} }

// prepare applies defaults, validates and makes the directories absolute.
func prepare(cfg Config) (Config, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg.absolute()
}

// inspect reports what is there for one service without changing anything.
func (s svc) inspect(ctx context.Context) (Service, *pidRecord) {
	out := Service{Name: s.spec.Name, Endpoint: s.endpoint, LogFile: s.logPath}
	rec, _ := readPidFile(s.pidPath)
	if rec != nil && rec.alive() {
		out.PID, out.StartedByUs = rec.PID, true
	} else {
		rec = nil
	}
	out.Running = s.probe(ctx, s.endpoint) == nil
	return out, rec
}

// Check reports what is running and answering. It changes nothing; its error
// is only ever a configuration error. A service the state dir's pid file
// shows alive on another port than cfg's is reported on that port.
func Check(ctx context.Context, cfg Config) (Status, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return Status{}, err
	}
	var out [2]Service
	for i, s := range services(cfg) {
		var rec *pidRecord
		out[i], rec = s.inspect(ctx)
		// A process of this state dir listening elsewhere than cfg's port
		// (status --state-dir DIR without the ports): report that one.
		if rec != nil {
			if ep, ok := endpointOf(cfg.Host, rec.Argv); ok && ep != out[i].Endpoint {
				out[i].Endpoint = ep
				out[i].Running = s.probe(ctx, ep) == nil
			}
		}
	}
	return status(out), nil
}

// Up makes both services answer (DynamoDB Local only, with cfg.SkipMinIO).
// For each one:
//   - if its endpoint already answers, it is reused (StartedByUs tells whether
//     our pid file owns it);
//   - if a process of ours is alive but not answering yet, Up waits for it;
//   - if the port is taken by something else, Up fails with ErrPortInUse;
//   - otherwise it starts the service (ErrToolMissing if not installed).
//
// Up then waits up to cfg.StartTimeout for the started services to answer
// (ErrNotReady, with the tail of the log, if one does not or exits). On any
// error it stops the processes it started in this call, so a failed Up leaves
// nothing half-running of its own. The returned Status is valid even with an error.
func Up(ctx context.Context, cfg Config) (Status, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return Status{}, err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return Status{}, fmt.Errorf("devstack: create state dir: %w", err)
	}
	svcs := services(cfg)
	var (
		out     [2]Service
		waitFor [2]func() (bool, error) // non-nil: a process of ours to wait for; reports whether it exited
		started [2]*pidRecord           // processes started in this call (rolled back on error)
		errs    []error
	)
	// Pass 1: decide, so that nothing is started when one service cannot be.
	toStart := make([]int, 0, len(svcs))
	for i, s := range svcs {
		st, rec := s.inspect(ctx)
		out[i] = st
		switch {
		case cfg.SkipMinIO && s.spec.Name == NameMinIO:
			// Not wanted: reported as found, never started or waited for.
		case st.Running:
			// Reuse, whoever started it.
		case rec != nil:
			waitFor[i] = rec.gone // ours, still starting (or hung: the timeout tells)
		case portOpen(s.host, s.port):
			errs = append(errs, fmt.Errorf("%w: %s is taken but does not answer like %s; stop that program or choose another port",
				ErrPortInUse, s.endpoint, s.spec.Name))
		default:
			if err := checkTools(s.spec); err != nil {
				errs = append(errs, err)
				continue
			}
			toStart = append(toStart, i)
		}
	}
	if len(errs) > 0 {
		return status(out), errors.Join(errs...)
	}

	// Pass 2: start what is missing.
	for _, i := range toStart {
		s := svcs[i]
		_ = os.Remove(s.pidPath) // stale: the recorded process is gone
		if s.spec.Name == NameMinIO {
			if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
				errs = append(errs, fmt.Errorf("devstack: create MinIO data dir: %w", err))
				break
			}
		}
		rec, exited, err := start(s.spec, s.pidPath, s.logPath, cfg.StateDir)
		if err != nil {
			errs = append(errs, err)
			break
		}
		started[i] = rec
		waitFor[i] = func() (bool, error) {
			select {
			case err := <-exited:
				return true, err
			default:
				return false, nil
			}
		}
		out[i].PID, out[i].StartedByUs = rec.PID, true
	}

	if len(errs) == 0 {
		var wg sync.WaitGroup
		waitErrs := make([]error, len(svcs))
		deadline := time.Now().Add(cfg.StartTimeout)
		for i := range svcs {
			if waitFor[i] == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				waitErrs[i] = waitReady(ctx, svcs[i], cfg.StartTimeout, deadline, waitFor[i])
			}()
		}
		wg.Wait()
		for i, err := range waitErrs {
			if err != nil {
				errs = append(errs, err)
			} else if waitFor[i] != nil {
				out[i].Running = true
			}
		}
	}

	if len(errs) > 0 {
		for i, rec := range started {
			if rec == nil {
				continue
			}
			if err := stop(context.WithoutCancel(ctx), rec); err != nil {
				errs = append(errs, err)
			} else {
				_ = os.Remove(svcs[i].pidPath)
				out[i].PID, out[i].StartedByUs, out[i].Running = 0, false, false
			}
		}
		return status(out), errors.Join(errs...)
	}
	return status(out), nil
}

// waitReady polls s until it answers, its process exits, ctx ends or the deadline passes.
func waitReady(ctx context.Context, s svc, timeout time.Duration, deadline time.Time, gone func() (bool, error)) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.probe(ctx, s.endpoint) == nil {
			return nil
		}
		if exited, err := gone(); exited {
			return fmt.Errorf("%w: %s exited before answering on %s (%s); last lines of %s:\n%s",
				ErrNotReady, s.spec.Name, s.endpoint, exitText(err), s.logPath, logTail(s.logPath, 20))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s: %v", ErrNotReady, s.spec.Name, ctx.Err())
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s did not answer on %s within %s; last lines of %s:\n%s",
				ErrNotReady, s.spec.Name, s.endpoint, timeout, s.logPath, logTail(s.logPath, 20))
		}
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Down stops the services recorded in our pid files: only a process whose
// /proc/PID/cmdline still equals the recorded command line is signalled
// (SIGTERM, then SIGKILL after 10s). Pid files are removed; services that
// someone else started are left alone. It returns the Status afterwards.
func Down(ctx context.Context, cfg Config) (Status, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return Status{}, err
	}
	var errs []error
	// The endpoints the stopped processes listened on, which the state
	// dir's pid files know even when cfg's ports are the defaults.
	svcs := services(cfg)
	var stopped [len(svcs)]string
	for i, s := range svcs {
		rec, err := readPidFile(s.pidPath)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if ep, ok := endpointOf(cfg.Host, rec.Argv); ok {
			stopped[i] = ep
		}
		if rec.alive() {
			if err := stop(ctx, rec); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := os.Remove(s.pidPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	st, _ := Check(ctx, cfg)
	for i, svc := range []*Service{&st.DynamoDB, &st.S3} { // services' order
		if ep := stopped[i]; ep != "" && ep != svc.Endpoint {
			svc.Endpoint, svc.PID, svc.StartedByUs = ep, 0, false
			svc.Running = svcs[i].probe(ctx, ep) == nil
		}
	}
	return st, errors.Join(errs...)
}

// endpointOf reads the endpoint a service was started on from its command
// line (DynamoDB Local's -port, MinIO's --address).
func endpointOf(host string, argv []string) (string, bool) {
	for i := 0; i+1 < len(argv); i++ {
		switch argv[i] {
		case "-port":
			return "http://" + net.JoinHostPort(host, argv[i+1]), true
		case "--address":
			return "http://" + argv[i+1], true
		}
	}
	return "", false
}
