package simulate

import (
	"encoding/base64"
	"strings"
	"time"
)

// Full-size workflow_job webhook bodies (PayloadsFull): the objects around
// workflow_job as GitHub sends them, with every URL and metadata field of
// its documented example payloads (and of ingest/testdata/github). The
// extra fields are derived from the run without drawing randomness, so that
// a full run differs from the trimmed run of the same Config only in these
// bodies; the fields both forms have hold the same values.

// repoMeta describes the simulated repositories.
var repoMeta = map[string]struct {
	description, language string
	topics                []string
}{
	"api":         {"Public REST and GraphQL API", "Go", []string{"api", "go", "graphql"}},
	"web":         {"Customer web application", "TypeScript", []string{"nextjs", "react"}},
	"infra":       {"Terraform modules and Kubernetes manifests", "HCL", []string{"terraform", "kubernetes"}},
	"docs":        {"Product documentation", "MDX", []string{"docs"}},
	"platform":    {"Core platform services", "Kotlin", []string{"platform"}},
	"mobile-app":  {"iOS and Android apps", "Dart", []string{"flutter", "mobile"}},
	"tps-reports": {"TPS report generation and cover sheets", "Java", nil},
	"billing":     {"Billing, invoicing and dunning", "Python", []string{"billing", "stripe"}},
	"oss-sdk":     {"Open-source client SDK", "TypeScript", []string{"sdk", "open-source"}},
	"monorepo":    {"Everything that ships", "Go", nil},
	"tools":       {"Internal developer tools", "Shell", nil},
}

var orgDescriptions = map[string]string{
	"acme-corp": "Acme Corporation engineering",
	"globex":    "Globex Corporation: platform and mobile",
	"initech":   "Initech software",
	"corp":      "Corp engineering (GitHub Enterprise Server)",
}

// ghFullBody is the full webhook body of the job for the action.
func ghFullBody(run *ghRun, j *ghJob, action string) *whFullPayload {
	in := run.in
	owner := in.fullUser(in.org, "Organization")
	owner.NodeID = "O_kgDO" + itoa(in.org.id) // as the trimmed organization says
	p := &whFullPayload{
		Action:      action,
		WorkflowJob: ghWorkflowJob(run, j, action),
		Repository:  in.fullRepo(run, owner),
		Organization: &whFullOrg{
			Login: in.org.login, ID: in.org.id, NodeID: owner.NodeID,
			URL: in.api + "/orgs/" + in.org.login, ReposURL: in.api + "/orgs/" + in.org.login + "/repos",
			EventsURL: in.api + "/orgs/" + in.org.login + "/events", HooksURL: in.api + "/orgs/" + in.org.login + "/hooks",
			IssuesURL: in.api + "/orgs/" + in.org.login + "/issues", MembersURL: in.api + "/orgs/" + in.org.login + "/members{/member}",
			PublicMembersURL: in.api + "/orgs/" + in.org.login + "/public_members{/member}",
			AvatarURL:        owner.AvatarURL, Description: orgDescriptions[in.org.login],
		},
		Sender: in.fullUser(run.sender, "User"),
	}
	if strings.HasSuffix(run.sender.login, "[bot]") {
		p.Sender = in.fullUser(run.sender, "Bot")
	}
	if d := j.deployment; d != nil {
		repoAPI := in.api + "/repos/" + in.org.login + "/" + run.repo.name
		p.Deployment = &whFullDeployment{
			URL: d.URL, ID: d.ID, NodeID: d.NodeID, Task: d.Task, OriginalEnv: d.OriginalEnv, Environment: d.Environment,
			CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, StatusesURL: d.URL + "/statuses", RepositoryURL: repoAPI,
			Creator: p.Sender, SHA: run.sha, Ref: run.branch, Payload: struct{}{}, ProductionEnvironment: true,
		}
	}
	if !in.ghes {
		p.Installation = &whInstallation{ID: in.id, NodeID: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u" + itoa(in.id)}
	}
	return p
}

// fullUser is a user, bot or organization object with its URLs.
func (in *ghInstall) fullUser(a ghAccount, typ string) whFullUser {
	api := in.api + "/users/" + a.login
	avatar := "https://avatars.githubusercontent.com/u/" + itoa(a.id) + "?v=4"
	if in.ghes {
		avatar = in.web + "/avatars/u/" + itoa(a.id) + "?"
	}
	prefix := "04:User"
	if typ == "Bot" {
		prefix = "03:Bot"
	}
	return whFullUser{
		Login: a.login, ID: a.id, NodeID: base64.StdEncoding.EncodeToString([]byte(prefix + itoa(a.id))),
		AvatarURL: avatar, URL: api, HTMLURL: in.web + "/" + a.login,
		FollowersURL: api + "/followers", FollowingURL: api + "/following{/other_user}",
		GistsURL: api + "/gists{/gist_id}", StarredURL: api + "/starred{/owner}{/repo}",
		SubscriptionsURL: api + "/subscriptions", OrganizationsURL: api + "/orgs", ReposURL: api + "/repos",
		EventsURL: api + "/events{/privacy}", ReceivedEventsURL: api + "/received_events",
		Type: typ, UserViewType: "public",
	}
}

// fullRepo is the repository object with its URLs and metadata.
func (in *ghInstall) fullRepo(run *ghRun, owner whFullUser) whFullRepo {
	r := run.repo
	full := in.org.login + "/" + r.name
	api := in.api + "/repos/" + full
	host := strings.TrimPrefix(in.web, "https://")
	meta := repoMeta[r.name]
	topics := meta.topics
	if topics == nil {
		topics = []string{}
	}
	created := time.Date(2016+int(r.id%8), time.Month(1+r.id%12), 1+int(r.id%28), int(r.id%24), int(r.id/7%60), int(r.id/11%60), 0, time.UTC)
	visibility, stars, forks := "private", int64(0), int64(0)
	if !r.private {
		visibility, stars, forks = "public", 40+r.id%900, 3+r.id%60
	}
	issues := r.id % 37
	priority := "high"
	if !r.private {
		priority = "medium"
	}
	return whFullRepo{
		ID: r.id, NodeID: "R_kgDO" + itoa(r.id), Name: r.name, FullName: full, Private: r.private, Owner: owner,
		HTMLURL: in.web + "/" + full, Description: meta.description, URL: api,
		ForksURL: api + "/forks", KeysURL: api + "/keys{/key_id}", CollaboratorsURL: api + "/collaborators{/collaborator}",
		TeamsURL: api + "/teams", HooksURL: api + "/hooks", IssueEventsURL: api + "/issues/events{/number}",
		EventsURL: api + "/events", AssigneesURL: api + "/assignees{/user}", BranchesURL: api + "/branches{/branch}",
		TagsURL: api + "/tags", BlobsURL: api + "/git/blobs{/sha}", GitTagsURL: api + "/git/tags{/sha}",
		GitRefsURL: api + "/git/refs{/sha}", TreesURL: api + "/git/trees{/sha}", StatusesURL: api + "/statuses/{sha}",
		LanguagesURL: api + "/languages", StargazersURL: api + "/stargazers", ContributorsURL: api + "/contributors",
		SubscribersURL: api + "/subscribers", SubscriptionURL: api + "/subscription", CommitsURL: api + "/commits{/sha}",
		GitCommitsURL: api + "/git/commits{/sha}", CommentsURL: api + "/comments{/number}",
		IssueCommentURL: api + "/issues/comments{/number}", ContentsURL: api + "/contents/{+path}",
		CompareURL: api + "/compare/{base}...{head}", MergesURL: api + "/merges", ArchiveURL: api + "/{archive_format}{/ref}",
		DownloadsURL: api + "/downloads", IssuesURL: api + "/issues{/number}", PullsURL: api + "/pulls{/number}",
		MilestonesURL: api + "/milestones{/number}", NotificationsURL: api + "/notifications{?since,all,participating}",
		LabelsURL: api + "/labels{/name}", ReleasesURL: api + "/releases{/id}", DeploymentsURL: api + "/deployments",
		CreatedAt: created, UpdatedAt: run.pushed, PushedAt: run.pushed,
		GitURL: "git://" + host + "/" + full + ".git", SSHURL: "git@" + host + ":" + full + ".git",
		CloneURL: in.web + "/" + full + ".git", SvnURL: in.web + "/" + full,
		Size: 800 + r.id%90_000, StargazersCount: stars, WatchersCount: stars, Language: meta.language,
		HasIssues: true, HasProjects: !r.private, HasDownloads: true, HasWiki: !r.private,
		ForksCount: forks, OpenIssuesCount: issues, AllowForking: !r.private, Topics: topics,
		Visibility: visibility, Forks: forks, OpenIssues: issues, Watchers: stars, DefaultBranch: r.branch,
		CustomProperties: map[string]string{"team": strings.SplitN(r.name, "-", 2)[0], "priority": priority},
	}
}

// whFullPayload is the workflow_job webhook body as GitHub sends it.
type whFullPayload = whBody[whFullDeployment, whFullRepo, whFullOrg, whFullUser]

type whFullUser struct {
	Login             string `json:"login"`
	ID                int64  `json:"id"`
	NodeID            string `json:"node_id"`
	AvatarURL         string `json:"avatar_url"`
	GravatarID        string `json:"gravatar_id"`
	URL               string `json:"url"`
	HTMLURL           string `json:"html_url"`
	FollowersURL      string `json:"followers_url"`
	FollowingURL      string `json:"following_url"`
	GistsURL          string `json:"gists_url"`
	StarredURL        string `json:"starred_url"`
	SubscriptionsURL  string `json:"subscriptions_url"`
	OrganizationsURL  string `json:"organizations_url"`
	ReposURL          string `json:"repos_url"`
	EventsURL         string `json:"events_url"`
	ReceivedEventsURL string `json:"received_events_url"`
	Type              string `json:"type"`
	UserViewType      string `json:"user_view_type"`
	SiteAdmin         bool   `json:"site_admin"`
}

type whFullOrg struct {
	Login            string `json:"login"`
	ID               int64  `json:"id"`
	NodeID           string `json:"node_id"`
	URL              string `json:"url"`
	ReposURL         string `json:"repos_url"`
	EventsURL        string `json:"events_url"`
	HooksURL         string `json:"hooks_url"`
	IssuesURL        string `json:"issues_url"`
	MembersURL       string `json:"members_url"`
	PublicMembersURL string `json:"public_members_url"`
	AvatarURL        string `json:"avatar_url"`
	Description      string `json:"description"`
}

type whFullDeployment struct {
	URL                   string     `json:"url"`
	ID                    int64      `json:"id"`
	NodeID                string     `json:"node_id"`
	Task                  string     `json:"task"`
	OriginalEnv           string     `json:"original_environment"`
	Environment           string     `json:"environment"`
	Description           *string    `json:"description"`
	CreatedAt             time.Time  `json:"created_at"`
	UpdatedAt             time.Time  `json:"updated_at"`
	StatusesURL           string     `json:"statuses_url"`
	RepositoryURL         string     `json:"repository_url"`
	Creator               whFullUser `json:"creator"`
	SHA                   string     `json:"sha"`
	Ref                   string     `json:"ref"`
	Payload               struct{}   `json:"payload"`
	TransientEnvironment  bool       `json:"transient_environment"`
	ProductionEnvironment bool       `json:"production_environment"`
	PerformedViaGitHubApp *struct{}  `json:"performed_via_github_app"`
}

type whFullRepo struct {
	ID                       int64             `json:"id"`
	NodeID                   string            `json:"node_id"`
	Name                     string            `json:"name"`
	FullName                 string            `json:"full_name"`
	Private                  bool              `json:"private"`
	Owner                    whFullUser        `json:"owner"`
	HTMLURL                  string            `json:"html_url"`
	Description              string            `json:"description"`
	Fork                     bool              `json:"fork"`
	URL                      string            `json:"url"`
	ForksURL                 string            `json:"forks_url"`
	KeysURL                  string            `json:"keys_url"`
	CollaboratorsURL         string            `json:"collaborators_url"`
	TeamsURL                 string            `json:"teams_url"`
	HooksURL                 string            `json:"hooks_url"`
	IssueEventsURL           string            `json:"issue_events_url"`
	EventsURL                string            `json:"events_url"`
	AssigneesURL             string            `json:"assignees_url"`
	BranchesURL              string            `json:"branches_url"`
	TagsURL                  string            `json:"tags_url"`
	BlobsURL                 string            `json:"blobs_url"`
	GitTagsURL               string            `json:"git_tags_url"`
	GitRefsURL               string            `json:"git_refs_url"`
	TreesURL                 string            `json:"trees_url"`
	StatusesURL              string            `json:"statuses_url"`
	LanguagesURL             string            `json:"languages_url"`
	StargazersURL            string            `json:"stargazers_url"`
	ContributorsURL          string            `json:"contributors_url"`
	SubscribersURL           string            `json:"subscribers_url"`
	SubscriptionURL          string            `json:"subscription_url"`
	CommitsURL               string            `json:"commits_url"`
	GitCommitsURL            string            `json:"git_commits_url"`
	CommentsURL              string            `json:"comments_url"`
	IssueCommentURL          string            `json:"issue_comment_url"`
	ContentsURL              string            `json:"contents_url"`
	CompareURL               string            `json:"compare_url"`
	MergesURL                string            `json:"merges_url"`
	ArchiveURL               string            `json:"archive_url"`
	DownloadsURL             string            `json:"downloads_url"`
	IssuesURL                string            `json:"issues_url"`
	PullsURL                 string            `json:"pulls_url"`
	MilestonesURL            string            `json:"milestones_url"`
	NotificationsURL         string            `json:"notifications_url"`
	LabelsURL                string            `json:"labels_url"`
	ReleasesURL              string            `json:"releases_url"`
	DeploymentsURL           string            `json:"deployments_url"`
	CreatedAt                time.Time         `json:"created_at"`
	UpdatedAt                time.Time         `json:"updated_at"`
	PushedAt                 time.Time         `json:"pushed_at"`
	GitURL                   string            `json:"git_url"`
	SSHURL                   string            `json:"ssh_url"`
	CloneURL                 string            `json:"clone_url"`
	SvnURL                   string            `json:"svn_url"`
	Homepage                 *string           `json:"homepage"`
	Size                     int64             `json:"size"`
	StargazersCount          int64             `json:"stargazers_count"`
	WatchersCount            int64             `json:"watchers_count"`
	Language                 string            `json:"language"`
	HasIssues                bool              `json:"has_issues"`
	HasProjects              bool              `json:"has_projects"`
	HasDownloads             bool              `json:"has_downloads"`
	HasWiki                  bool              `json:"has_wiki"`
	HasPages                 bool              `json:"has_pages"`
	HasDiscussions           bool              `json:"has_discussions"`
	ForksCount               int64             `json:"forks_count"`
	MirrorURL                *string           `json:"mirror_url"`
	Archived                 bool              `json:"archived"`
	Disabled                 bool              `json:"disabled"`
	OpenIssuesCount          int64             `json:"open_issues_count"`
	License                  *struct{}         `json:"license"`
	AllowForking             bool              `json:"allow_forking"`
	IsTemplate               bool              `json:"is_template"`
	WebCommitSignoffRequired bool              `json:"web_commit_signoff_required"`
	Topics                   []string          `json:"topics"`
	Visibility               string            `json:"visibility"`
	Forks                    int64             `json:"forks"`
	OpenIssues               int64             `json:"open_issues"`
	Watchers                 int64             `json:"watchers"`
	DefaultBranch            string            `json:"default_branch"`
	CustomProperties         map[string]string `json:"custom_properties"`
}
