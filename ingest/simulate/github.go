package simulate

import (
	"strings"
	"time"

	"github.com/streamfold/streamfold/schema"
)

// GitHub workflow runs (seed 003): workflow_job webhooks in GitHub's native
// body shape, deployment approvals and the RunsOn runner events of each job.

// sourceRunsOn is the source of RunsOn's internal runner events.
const sourceRunsOn = "runs-on"

// ghState holds the installations and the id counters of a run.
type ghState struct {
	insts   []*ghInstall
	weights []int
}

// ghCounters hands out ids. github.com ids are global (shared by every
// installation) and large; a GHES server counts from small numbers.
type ghCounters struct{ run, job, deployment, runner int64 }

func (c *ghCounters) nextRun(g *gen) int64 {
	c.run += int64(g.intIn(1, 4000))
	return c.run
}

func (c *ghCounters) nextJob(g *gen) int64 {
	c.job += int64(g.intIn(1, 40))
	return c.job
}

func (c *ghCounters) nextDeployment(g *gen) int64 {
	c.deployment += int64(g.intIn(1, 500))
	return c.deployment
}

func (c *ghCounters) nextRunner(g *gen) int64 {
	c.runner += int64(g.intIn(1, 3))
	return c.runner
}

type ghAccount struct {
	login string
	id    int64
}

type ghInstall struct {
	id      int64 // 0: a GHES server's webhook, which has no installation
	org     ghAccount
	web     string // https://github.com or the GHES host
	api     string // REST API base
	region  string // where its RunsOn stack runs
	ghes    bool
	repos   []ghRepo
	rweight []int
	members []ghAccount
	ids     *ghCounters
}

type ghRepo struct {
	id      int64
	name    string
	private bool
	branch  string // default branch
}

func (st *ghState) init(g *gen) {
	com := &ghCounters{
		run:        11_000_000_000 + int64(g.r.IntN(1_000_000_000)),
		job:        31_000_000_000 + int64(g.r.IntN(1_000_000_000)),
		deployment: 1_900_000_000 + int64(g.r.IntN(100_000_000)),
		runner:     int64(400 + g.r.IntN(400)),
	}
	ghes := &ghCounters{
		run:        int64(4_000 + g.r.IntN(1_000)),
		job:        int64(15_000 + g.r.IntN(5_000)),
		deployment: int64(200 + g.r.IntN(100)),
		runner:     int64(20 + g.r.IntN(50)),
	}
	dotcom := func(id int64, org ghAccount, region string, members []ghAccount, repos ...ghRepo) *ghInstall {
		return &ghInstall{id: id, org: org, web: "https://github.com", api: "https://api.github.com", region: region, repos: repos, members: members, ids: com}
	}
	st.insts = []*ghInstall{
		dotcom(12345, ghAccount{"acme-corp", 44172910}, "us-east-1",
			[]ghAccount{{"alice-dev", 5811201}, {"bob-ops", 7720314}, {"carol-sre", 9103377}, {"dependabot[bot]", 49699333}},
			ghRepo{682231907, "api", true, "main"}, ghRepo{682231955, "web", true, "main"},
			ghRepo{690117342, "infra", true, "main"}, ghRepo{701882214, "docs", false, "main"}),
		dotcom(67890, ghAccount{"globex", 88233101}, "eu-west-1",
			[]ghAccount{{"hank-scorpio", 3120045}, {"frank-grimes", 6650193}, {"renovate[bot]", 29139614}},
			ghRepo{512099871, "platform", true, "main"}, ghRepo{512100442, "mobile-app", true, "develop"}),
		dotcom(24601, ghAccount{"initech", 22604570}, "us-west-2",
			[]ghAccount{{"peter-gibbons", 1101988}, {"milton-w", 1101999}, {"samir-n", 2210437}},
			ghRepo{301554098, "tps-reports", true, "master"}, ghRepo{301554177, "billing", true, "main"},
			ghRepo{455120023, "oss-sdk", false, "main"}),
		{id: 0, org: ghAccount{"corp", 3}, web: "https://ghes.corp.example", api: "https://ghes.corp.example/api/v3",
			region: "us-east-1", ghes: true, ids: ghes,
			members: []ghAccount{{"jdoe", 14}, {"asmith", 27}, {"build-bot", 5}},
			repos:   []ghRepo{{1001, "monorepo", true, "main"}, {1017, "tools", true, "main"}},
			rweight: []int{80, 20}},
	}
	st.insts[0].rweight = []int{45, 30, 15, 10}
	st.insts[1].rweight = []int{70, 30}
	st.insts[2].rweight = []int{40, 40, 20}
	st.weights = []int{40, 25, 20, 15}
}

// source is the envelope source of the installation's webhooks, as the
// ingest webhook handler derives it: "https://github.com/<owner>" (also for
// GHES, whose owner logins are not global).
func (in *ghInstall) source() string { return "https://github.com/" + in.org.login }

// ghJobSpec is one job of a workflow.
type ghJobSpec struct {
	name     string
	level    int    // jobs of level n need every job of level n-1
	kind     string // duration and command profile
	approval bool   // targets the protected "production" environment
	hosted   bool   // a GitHub-hosted runner: no RunsOn events
	pool     string // a RunsOn pool, else an instance of spec runner
	runner   string
	spot     bool
}

type ghKind struct {
	lo, mid, hi time.Duration
	command     string
	failure     int // permille of failed runs
}

var ghKinds = map[string]ghKind{
	"lint":        {15 * time.Second, 90 * time.Second, 5 * time.Minute, "make lint", 60},
	"build":       {45 * time.Second, 4 * time.Minute, 12 * time.Minute, "make build", 50},
	"test":        {time.Minute, 6 * time.Minute, 20 * time.Minute, "make test", 110},
	"integration": {3 * time.Minute, 10 * time.Minute, 30 * time.Minute, "make test-integration", 140},
	"deploy":      {30 * time.Second, 3 * time.Minute, 10 * time.Minute, "./scripts/deploy.sh", 40},
	"smoke":       {20 * time.Second, 2 * time.Minute, 6 * time.Minute, "make smoke", 60},
	"docker":      {2 * time.Minute, 6 * time.Minute, 18 * time.Minute, "docker buildx build --push .", 40},
	"manifest":    {10 * time.Second, 40 * time.Second, 2 * time.Minute, "docker buildx imagetools create", 20},
	"bench":       {10 * time.Minute, 25 * time.Minute, 45 * time.Minute, "go test -run '^$' -bench . ./...", 30},
	"fuzz":        {10 * time.Minute, 15 * time.Minute, 20 * time.Minute, "go test -fuzz . -fuzztime 15m", 80},
}

// runnerSpecs are RunsOn runner specs, their instance types and on-demand
// prices in millionths of a dollar per hour.
var runnerSpecs = map[string]struct {
	types  []string
	prices []int64
}{
	"2cpu-linux-x64":   {[]string{"m7i.large", "c7i.large", "m7a.large"}, []int64{100_800, 89_250, 115_920}},
	"4cpu-linux-x64":   {[]string{"m7i.xlarge", "c7i.xlarge", "m7a.xlarge"}, []int64{201_600, 178_500, 231_840}},
	"8cpu-linux-x64":   {[]string{"c7i.2xlarge", "m7i.2xlarge"}, []int64{357_000, 403_200}},
	"16cpu-linux-x64":  {[]string{"c7i.4xlarge"}, []int64{714_000}},
	"2cpu-linux-arm64": {[]string{"c7g.large", "m7g.large"}, []int64{72_500, 81_600}},
	"4cpu-linux-arm64": {[]string{"c7g.xlarge", "m7g.xlarge"}, []int64{145_000, 163_200}},
}

// runnerPools are RunsOn pools of warm, on-demand instances.
var runnerPools = map[string]struct {
	instanceType string
	price        int64
}{
	"small-x64":    {"m7i.large", 100_800},
	"medium-arm64": {"c7g.xlarge", 145_000},
}

type ghRun struct {
	in       *ghInstall
	repo     *ghRepo
	id       int64
	attempt  int
	workflow string
	sha      string
	branch   string
	sender   ghAccount
	pushed   time.Time // the push that started it: the repository's pushed_at
}

// githubRun simulates one workflow run: its jobs level by level and, after
// a failure, sometimes a re-run of the failed jobs as run_attempt 2.
func (g *gen) githubRun(at time.Time) {
	in := g.gh.insts[g.weighted(g.gh.weights)]
	repo := &in.repos[g.weighted(in.rweight)]
	name, specs := g.ghWorkflow(in)
	run := &ghRun{in: in, repo: repo, id: in.ids.nextRun(g), workflow: name, sha: g.hex(40), branch: repo.branch,
		sender: in.members[g.r.IntN(len(in.members))], pushed: sec(at)}
	if name == "CI" && g.chance(450) {
		run.branch = []string{"feature/", "fix/", "chore/"}[g.r.IntN(3)] + branchSlugs[g.r.IntN(len(branchSlugs))]
	}
	start := at
	for attempt := 1; ; attempt++ {
		run.attempt = attempt
		rerun, end, failed := g.ghAttempt(run, specs, start)
		if !failed || attempt >= 2 || !g.chance(400) {
			return
		}
		specs, start = rerun, end.Add(g.skewed(time.Minute, 8*time.Minute, 45*time.Minute))
	}
}

var branchSlugs = []string{"retry-webhooks", "bump-go-1.26", "cache-deps", "login-redirect", "flaky-test", "arm64-builds", "new-pricing-page", "otel-traces", "rate-limiter", "s3-multipart"}

// ghWorkflow picks a workflow and its jobs.
func (g *gen) ghWorkflow(in *ghInstall) (string, []ghJobSpec) {
	var name string
	var jobs []ghJobSpec
	switch g.weighted([]int{60, 15, 15, 10}) {
	case 0:
		name = "CI"
		pool := []ghJobSpec{
			{name: "lint", kind: "lint"}, {name: "build", kind: "build"},
			{name: "test (ubuntu-24.04)", kind: "test"}, {name: "unit-tests", kind: "test"},
			{name: "typecheck", kind: "lint"}, {name: "test (arm64)", kind: "test", runner: "4cpu-linux-arm64"},
		}
		n := g.intIn(1, 4)
		for _, i := range g.r.Perm(len(pool))[:n] {
			jobs = append(jobs, pool[i])
		}
		if g.chance(350) {
			jobs = append(jobs, ghJobSpec{name: "integration-tests", level: 1, kind: "integration", runner: "8cpu-linux-x64"})
			if g.chance(300) {
				jobs = append(jobs, ghJobSpec{name: "e2e", level: 1, kind: "integration", runner: "16cpu-linux-x64"})
			}
		}
	case 1:
		name = "Deploy"
		jobs = append(jobs, ghJobSpec{name: "build", kind: "build", runner: "4cpu-linux-x64"})
		lvl := 1
		if g.chance(500) {
			jobs = append(jobs, ghJobSpec{name: "deploy-staging", level: lvl, kind: "deploy"})
			lvl++
		}
		jobs = append(jobs, ghJobSpec{name: "deploy-production", level: lvl, kind: "deploy", approval: true})
		if g.chance(500) {
			jobs = append(jobs, ghJobSpec{name: "smoke-tests", level: lvl + 1, kind: "smoke"})
		}
	case 2:
		name = "Docker"
		jobs = append(jobs,
			ghJobSpec{name: "docker (linux/amd64)", kind: "docker", runner: "8cpu-linux-x64"},
			ghJobSpec{name: "docker (linux/arm64)", kind: "docker", runner: "4cpu-linux-arm64"},
			ghJobSpec{name: "manifest", level: 1, kind: "manifest"})
	default:
		name = "Nightly"
		pool := []ghJobSpec{
			{name: "benchmarks", kind: "bench", runner: "16cpu-linux-x64"}, {name: "fuzz (parser)", kind: "fuzz"},
			{name: "fuzz (decoder)", kind: "fuzz"}, {name: "dependency-audit", kind: "lint"},
		}
		for _, i := range g.r.Perm(len(pool))[:g.intIn(1, 3)] {
			jobs = append(jobs, pool[i])
		}
	}
	for i := range jobs {
		j := &jobs[i]
		switch {
		case !in.ghes && g.chance(100):
			j.hosted = true
		case j.runner == "" && g.chance(200):
			j.pool = []string{"small-x64", "medium-arm64"}[g.weighted([]int{3, 1})]
		default:
			if j.runner == "" {
				j.runner = []string{"2cpu-linux-x64", "4cpu-linux-x64", "2cpu-linux-arm64"}[g.weighted([]int{5, 3, 2})]
			}
			j.spot = g.chance(700)
		}
	}
	return name, jobs
}

// ghAttempt runs one attempt of a run. It returns the jobs to re-run (failed,
// cancelled and skipped), when the last job ended, and whether a job failed.
func (g *gen) ghAttempt(run *ghRun, specs []ghJobSpec, start time.Time) (rerun []ghJobSpec, end time.Time, failed bool) {
	created := start.Add(g.between(time.Second, 4*time.Second))
	end = created
	maxLevel := 0
	for _, s := range specs {
		maxLevel = max(maxLevel, s.level)
	}
	var blockedAt time.Time // when a job of an earlier level failed
	for lvl := 0; lvl <= maxLevel; lvl++ {
		levelEnd, any, levelFailed := created, false, false
		for _, s := range specs {
			if s.level != lvl {
				continue
			}
			any = true
			if !blockedAt.IsZero() {
				g.ghSkipped(run, s, blockedAt)
				rerun = append(rerun, s)
				continue
			}
			done, conclusion := g.ghJob(run, s, created.Add(g.between(0, 2*time.Second)))
			levelEnd = later(levelEnd, done)
			if conclusion != "success" {
				levelFailed = true
				rerun = append(rerun, s)
				failed = failed || conclusion == "failure"
			}
		}
		if !any || !blockedAt.IsZero() {
			continue
		}
		end = later(end, levelEnd)
		if levelFailed {
			blockedAt = levelEnd.Add(time.Second)
		}
		created = levelEnd.Add(g.between(2*time.Second, 8*time.Second))
	}
	return rerun, end, failed
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ghJob is one job of an attempt.
type ghJob struct {
	spec       ghJobSpec
	id         int64
	attempt    int
	nodeID     string
	labels     []string
	created    time.Time
	started    time.Time
	completed  time.Time
	conclusion string
	runnerID   int64
	runnerName string
	groupID    int64
	groupName  string
	deployment *whDeployment
}

func (g *gen) newGHJob(run *ghRun, s ghJobSpec, created time.Time) *ghJob {
	j := &ghJob{spec: s, id: run.in.ids.nextJob(g), attempt: run.attempt, nodeID: "CR_kwDO" + g.alnum(17), created: sec(created)}
	switch {
	case s.hosted:
		j.labels = []string{"ubuntu-latest"}
	case s.pool != "":
		j.labels = []string{"runs-on=" + itoa(run.id) + "/pool=" + s.pool}
	case s.spot:
		j.labels = []string{"runs-on=" + itoa(run.id) + "/runner=" + s.runner}
	default:
		j.labels = []string{"runs-on=" + itoa(run.id) + "/runner=" + s.runner + "/spot=false"}
	}
	return j
}

// ghJob simulates a job from queued to completed and returns when it
// completed and its conclusion.
func (g *gen) ghJob(run *ghRun, s ghJobSpec, created time.Time) (time.Time, string) {
	in := run.in
	j := g.newGHJob(run, s, created)
	queuedAt := j.created.Add(g.between(200*time.Millisecond, 1500*time.Millisecond))
	ready := queuedAt
	if s.approval {
		// A protected environment: queued, then waiting on the deployment's
		// approval, then (approved) queued a second time, under a new
		// delivery id; a rejection completes the job as failed.
		depID := in.ids.nextDeployment(g)
		j.deployment = &whDeployment{
			URL:         in.api + "/repos/" + in.org.login + "/" + run.repo.name + "/deployments/" + itoa(depID),
			ID:          depID,
			NodeID:      "DE_kwDO" + g.alnum(16),
			Task:        "deploy",
			OriginalEnv: "production",
			Environment: "production",
			CreatedAt:   j.created,
			UpdatedAt:   j.created,
		}
		g.ghWebhook(run, j, "queued", queuedAt)
		pending := sec(j.created.Add(g.between(time.Second, 3*time.Second)))
		g.ghDeployment(run, j, schema.TypeDeploymentPending, pending)
		g.ghWebhook(run, j, "waiting", pending.Add(g.between(200*time.Millisecond, 1500*time.Millisecond)))
		decided := sec(pending.Add(g.skewed(30*time.Second, 6*time.Minute, 50*time.Minute)))
		if g.chance(120) {
			g.ghDeployment(run, j, schema.TypeDeploymentRejected, decided)
			j.started, j.completed, j.conclusion = j.created, decided.Add(time.Second), "failure"
			g.ghWebhook(run, j, "completed", j.completed.Add(g.between(0, 900*time.Millisecond)))
			return j.completed, j.conclusion
		}
		g.ghDeployment(run, j, schema.TypeDeploymentApproved, decided)
		ready = decided.Add(g.between(500*time.Millisecond, 3*time.Second))
		g.ghWebhook(run, j, "queued", ready)
	}

	var rn *ghRunner
	if s.hosted {
		j.started = sec(ready.Add(g.between(4*time.Second, 25*time.Second)))
		j.runnerID = int64(g.intIn(2, 60))
		j.runnerName, j.groupID, j.groupName = "GitHub Actions "+itoa(j.runnerID), 0, "GitHub Actions"
	} else {
		rn = g.runsOn(run, j, ready)
		j.started = sec(rn.attached.Add(g.between(8*time.Second, 30*time.Second)))
		j.runnerID = in.ids.nextRunner(g)
		j.runnerName = "runs-on--" + rn.instanceID + "--" + strings.ToLower(g.alnum(5))
		j.groupID, j.groupName = 1, "Default"
	}
	startedAt := j.started.Add(g.between(0, 900*time.Millisecond))
	g.ghWebhook(run, j, "in_progress", startedAt)

	k := ghKinds[s.kind]
	dur := g.skewed(k.lo, k.mid, k.hi)
	switch r := g.r.IntN(1000); {
	case r < 25:
		j.conclusion = "cancelled"
		dur = g.between(10*time.Second, max(dur, 11*time.Second))
	case r < 25+k.failure:
		j.conclusion = "failure"
	default:
		j.conclusion = "success"
	}
	j.completed = sec(j.started.Add(max(dur, 10*time.Second)))
	completedAt := j.completed.Add(g.between(0, 900*time.Millisecond))
	g.ghWebhook(run, j, "completed", completedAt)

	if rn != nil {
		t := msec(completedAt.Add(g.between(3*time.Second, 25*time.Second)))
		usage := t.Sub(rn.attached).Milliseconds()
		g.ghRunnerEvent(run, j, schema.TypeRunnerTerminated, t, schema.RunnerEvent{
			InstanceID: rn.instanceID, InstanceType: rn.instanceType, InstanceLifecycle: rn.lifecycle, PoolName: s.pool,
			UsageInSeconds: ptr(seconds(usage)), UsageInDollars: ptr(money(usage * rn.price / msPerHour)),
		})
	}

	if !s.approval {
		switch {
		case g.chance(50):
			// The queued delivery is late: it arrives after in_progress.
			g.ghWebhook(run, j, "queued", startedAt.Add(g.between(500*time.Millisecond, 20*time.Second)))
		default:
			g.ghWebhook(run, j, "queued", queuedAt)
			if g.chance(20) {
				// GitHub sends queued a second time, under a new delivery id.
				g.ghWebhook(run, j, "queued", queuedAt.Add(g.between(2*time.Second, 90*time.Second)))
			}
		}
	}
	return j.completed, j.conclusion
}

// ghSkipped is a job skipped because a job it needs did not succeed: GitHub
// only reports it completed, with conclusion "skipped".
func (g *gen) ghSkipped(run *ghRun, s ghJobSpec, at time.Time) {
	j := g.newGHJob(run, s, at)
	j.started, j.completed, j.conclusion = j.created, j.created, "skipped"
	g.ghWebhook(run, j, "completed", j.completed.Add(g.between(0, 900*time.Millisecond)))
}

type ghRunner struct {
	instanceID   string
	instanceType string
	lifecycle    string
	price        int64 // millionths of a dollar per hour
	attached     time.Time
}

// runsOn schedules a RunsOn runner for the job once it is ready, attaches an
// instance and, for a few spot instances, is interrupted before the job
// starts and reschedules on demand.
func (g *gen) runsOn(run *ghRun, j *ghJob, ready time.Time) *ghRunner {
	s := j.spec
	rn := &ghRunner{lifecycle: "on-demand"}
	if s.pool != "" {
		p := runnerPools[s.pool]
		rn.instanceType, rn.price = p.instanceType, p.price
	} else {
		spec := runnerSpecs[s.runner]
		k := g.r.IntN(len(spec.types))
		rn.instanceType, rn.price = spec.types[k], spec.prices[k]
		if s.spot {
			rn.lifecycle, rn.price = "spot", rn.price*int64(g.intIn(28, 45))/100
		}
	}
	scheduled := msec(ready.Add(g.between(300*time.Millisecond, 2500*time.Millisecond)))
	attach := func() {
		if s.pool != "" {
			rn.attached = scheduled.Add(g.between(time.Second, 6*time.Second))
		} else {
			rn.attached = scheduled.Add(g.skewed(12*time.Second, 30*time.Second, 90*time.Second))
		}
		rn.instanceID = "i-0" + g.hex(16)
		fleet := ""
		if s.pool == "" {
			fleet = "fleet-" + g.uuid()
		}
		g.ghRunnerEvent(run, j, schema.TypeRunnerScheduled, scheduled, schema.RunnerEvent{
			InstanceType: rn.instanceType, InstanceLifecycle: rn.lifecycle, PoolName: s.pool, ScheduledAt: ptr(scheduled),
		})
		g.ghRunnerEvent(run, j, schema.TypeRunnerAttached, rn.attached, schema.RunnerEvent{
			InstanceID: rn.instanceID, InstanceType: rn.instanceType, InstanceLifecycle: rn.lifecycle, FleetID: fleet, PoolName: s.pool,
		})
	}
	attach()
	if rn.lifecycle == "spot" && g.chance(60) {
		at := rn.attached.Add(g.between(5*time.Second, 40*time.Second))
		usage := at.Sub(rn.attached).Milliseconds()
		g.ghRunnerEvent(run, j, schema.TypeRunnerInterrupted, at, schema.RunnerEvent{
			InstanceID: rn.instanceID, InstanceType: rn.instanceType, InstanceLifecycle: "spot",
			Reason:         "EC2 spot instance interruption notice",
			UsageInSeconds: ptr(seconds(usage)), UsageInDollars: ptr(money(usage * rn.price / msPerHour)),
		})
		at = at.Add(g.between(500*time.Millisecond, 3*time.Second))
		g.ghRunnerEvent(run, j, schema.TypeRunnerRescheduled, at, schema.RunnerEvent{
			InstanceType: rn.instanceType, Reason: "spot interruption of " + rn.instanceID + ", falling back to on-demand",
		})
		od := runnerSpecs[s.runner]
		for k, t := range od.types {
			if t == rn.instanceType {
				rn.price = od.prices[k]
			}
		}
		rn.lifecycle = "on-demand"
		scheduled = at.Add(g.between(200*time.Millisecond, 1500*time.Millisecond))
		attach()
	}
	return rn
}

func (g *gen) ghRunnerEvent(run *ghRun, j *ghJob, typ string, t time.Time, p schema.RunnerEvent) {
	t = msec(t)
	p.InstallationID, p.JobID, p.RunID, p.RunAttempt = run.in.id, j.id, run.id, j.attempt
	p.RepoFullName, p.Region = run.in.org.login+"/"+run.repo.name, run.in.region
	ev := g.event(g.uuid(), sourceRunsOn, typ, schema.JobSubject(run.in.id, j.id), t, &p)
	g.add(ev, t, g.between(10*time.Millisecond, 250*time.Millisecond), 0)
}

func (g *gen) ghDeployment(run *ghRun, j *ghJob, typ string, t time.Time) {
	p := schema.DeploymentEvent{
		InstallationID: run.in.id, DeploymentID: j.deployment.ID, RepoFullName: run.in.org.login + "/" + run.repo.name,
		Environment: j.deployment.Environment, RequiresApproval: true, JobIDs: []int64{j.id},
	}
	ev := g.event(g.uuid(), run.in.source(), typ, schema.DeploymentSubject(run.in.id, j.deployment.ID), t, &p)
	g.add(ev, t.Add(g.between(0, 900*time.Millisecond)), g.between(100*time.Millisecond, 2*time.Second), g.redelivery())
}

// redelivery returns, for about 3% of webhook deliveries, the delay after
// which GitHub delivers the same delivery (same GUID) again: seconds to a
// minute in OrderTime, whose day slices are short, up to 15 minutes in
// OrderSubject.
func (g *gen) redelivery() time.Duration {
	if g.chance(30) {
		if g.cfg.Order == OrderTime {
			return g.skewed(2*time.Second, 10*time.Second, time.Minute)
		}
		return g.skewed(30*time.Second, 3*time.Minute, 15*time.Minute)
	}
	return 0
}

// ghWebhook plans a workflow_job delivery with the job's state for the
// action, sent at happen. Its time is the payload's EventTime.
func (g *gen) ghWebhook(run *ghRun, j *ghJob, action string, happen time.Time) {
	in := run.in
	t := j.created
	ran := j.runnerName != ""
	if ran && (action == "in_progress" || action == "completed") {
		t = j.started
	}
	if action == "completed" {
		t = j.completed
	}
	var body any
	switch {
	case !g.mayArrive(happen): // never emitted: no body
	case g.cfg.GitHubPayloads == PayloadsFull:
		body = ghFullBody(run, j, action)
	default:
		body = ghBody(run, j, action)
	}
	ev := g.event(g.uuid(), in.source(), schema.WorkflowJobTypePrefix+action, schema.JobSubject(in.id, j.id), t, body)
	g.add(ev, happen, g.between(100*time.Millisecond, 2*time.Second), g.redelivery())
}

// ghWorkflowJob is the workflow_job object of a webhook for the action.
func ghWorkflowJob(run *ghRun, j *ghJob, action string) whJob {
	in := run.in
	full := in.org.login + "/" + run.repo.name
	wj := whJob{
		ID: j.id, RunID: run.id, WorkflowName: run.workflow, HeadBranch: run.branch,
		RunURL: in.api + "/repos/" + full + "/actions/runs/" + itoa(run.id), RunAttempt: j.attempt,
		NodeID: j.nodeID, HeadSHA: run.sha, URL: in.api + "/repos/" + full + "/actions/jobs/" + itoa(j.id),
		HTMLURL: in.web + "/" + full + "/actions/runs/" + itoa(run.id) + "/job/" + itoa(j.id),
		Status:  action, CreatedAt: j.created, StartedAt: j.created, Name: j.spec.name, Steps: []whStep{},
		CheckRunURL: in.api + "/repos/" + full + "/check-runs/" + itoa(j.id), Labels: j.labels,
	}
	ran := j.runnerName != ""
	if ran && (action == "in_progress" || action == "completed") {
		wj.StartedAt = j.started
		wj.RunnerID, wj.RunnerName = &j.runnerID, &j.runnerName
		wj.RunnerGroupID, wj.RunnerGroupName = &j.groupID, &j.groupName
	}
	switch action {
	case "in_progress":
		wj.Steps = []whStep{{Name: "Set up job", Status: "in_progress", Number: 1, StartedAt: &j.started}}
	case "completed":
		wj.StartedAt = j.started
		wj.Conclusion, wj.CompletedAt = &j.conclusion, &j.completed
		if ran {
			wj.Steps = ghSteps(j)
		}
	}
	return wj
}

// ghBody is the trimmed webhook body (PayloadsTrimmed).
func ghBody(run *ghRun, j *ghJob, action string) *whPayload {
	in := run.in
	full := in.org.login + "/" + run.repo.name
	p := whPayload{
		Action: action, WorkflowJob: ghWorkflowJob(run, j, action), Deployment: j.deployment,
		Repository: whRepo{
			ID: run.repo.id, NodeID: "R_kgDO" + itoa(run.repo.id), Name: run.repo.name, FullName: full,
			Private: run.repo.private, Owner: whUser{Login: in.org.login, ID: in.org.id, Type: "Organization"},
			HTMLURL: in.web + "/" + full, DefaultBranch: run.repo.branch,
		},
		Organization: &whOrg{Login: in.org.login, ID: in.org.id, NodeID: "O_kgDO" + itoa(in.org.id)},
		Sender:       whUser{Login: run.sender.login, ID: run.sender.id, Type: "User"},
	}
	if strings.HasSuffix(run.sender.login, "[bot]") {
		p.Sender.Type = "Bot"
	}
	if !in.ghes {
		p.Installation = &whInstallation{ID: in.id, NodeID: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u" + itoa(in.id)}
	}
	return &p
}

// ghSteps are the steps of a job that ran, as its completed webhook lists them.
func ghSteps(j *ghJob) []whStep {
	s, c := j.started, j.completed
	at := func(d time.Duration) *time.Time { t := s.Add(d); return &t }
	end := func(d time.Duration) *time.Time { t := c.Add(-d); return &t }
	ok := "success"
	return []whStep{
		{Name: "Set up job", Status: "completed", Conclusion: &ok, Number: 1, StartedAt: &s, CompletedAt: at(2 * time.Second)},
		{Name: "Run actions/checkout@v4", Status: "completed", Conclusion: &ok, Number: 2, StartedAt: at(2 * time.Second), CompletedAt: at(4 * time.Second)},
		{Name: "Run " + ghKinds[j.spec.kind].command, Status: "completed", Conclusion: &j.conclusion, Number: 3, StartedAt: at(4 * time.Second), CompletedAt: end(2 * time.Second)},
		{Name: "Post Run actions/checkout@v4", Status: "completed", Conclusion: &ok, Number: 5, StartedAt: end(2 * time.Second), CompletedAt: end(time.Second)},
		{Name: "Complete job", Status: "completed", Conclusion: &ok, Number: 6, StartedAt: end(time.Second), CompletedAt: &c},
	}
}

// whBody is the workflow_job webhook body in GitHub's field order, with
// the deployment, repository, organization and user objects of type D, R,
// O and U: abridged (whPayload) or as GitHub sends them (whFullPayload).
type whBody[D, R, O, U any] struct {
	Action       string          `json:"action"`
	WorkflowJob  whJob           `json:"workflow_job"`
	Deployment   *D              `json:"deployment,omitempty"`
	Repository   R               `json:"repository"`
	Organization *O              `json:"organization,omitempty"`
	Sender       U               `json:"sender"`
	Installation *whInstallation `json:"installation,omitempty"`
}

// whPayload is the body with the fields streamfold reads
// (schema.WorkflowJobWebhook) and the usual others.
type whPayload = whBody[whDeployment, whRepo, whOrg, whUser]

type whJob struct {
	ID              int64      `json:"id"`
	RunID           int64      `json:"run_id"`
	WorkflowName    string     `json:"workflow_name"`
	HeadBranch      string     `json:"head_branch"`
	RunURL          string     `json:"run_url"`
	RunAttempt      int        `json:"run_attempt"`
	NodeID          string     `json:"node_id"`
	HeadSHA         string     `json:"head_sha"`
	URL             string     `json:"url"`
	HTMLURL         string     `json:"html_url"`
	Status          string     `json:"status"`
	Conclusion      *string    `json:"conclusion"`
	CreatedAt       time.Time  `json:"created_at"`
	StartedAt       time.Time  `json:"started_at"`
	CompletedAt     *time.Time `json:"completed_at"`
	Name            string     `json:"name"`
	Steps           []whStep   `json:"steps"`
	CheckRunURL     string     `json:"check_run_url"`
	Labels          []string   `json:"labels"`
	RunnerID        *int64     `json:"runner_id"`
	RunnerName      *string    `json:"runner_name"`
	RunnerGroupID   *int64     `json:"runner_group_id"`
	RunnerGroupName *string    `json:"runner_group_name"`
}

type whStep struct {
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	Number      int        `json:"number"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

type whDeployment struct {
	URL         string    `json:"url"`
	ID          int64     `json:"id"`
	NodeID      string    `json:"node_id"`
	Task        string    `json:"task"`
	OriginalEnv string    `json:"original_environment"`
	Environment string    `json:"environment"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

type whRepo struct {
	ID            int64  `json:"id"`
	NodeID        string `json:"node_id"`
	Name          string `json:"name"`
	FullName      string `json:"full_name"`
	Private       bool   `json:"private"`
	Owner         whUser `json:"owner"`
	HTMLURL       string `json:"html_url"`
	DefaultBranch string `json:"default_branch"`
}

type whUser struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

type whOrg struct {
	Login  string `json:"login"`
	ID     int64  `json:"id"`
	NodeID string `json:"node_id"`
}

type whInstallation struct {
	ID     int64  `json:"id"`
	NodeID string `json:"node_id"`
}
