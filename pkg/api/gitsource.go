package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// gitRepoURL is a repository kcore may follow: an absolute path, or a URL
// with a scheme go-git fetches.
var gitRepoURL = regexp.MustCompile(`^(/|(https?|ssh|git|file)://[^\s]+$)`)

// GitSource policies: what the controller does with a plan a new commit makes.
const (
	// GitPolicyAuto applies a plan whose disruption is within maxDisruption.
	GitPolicyAuto = "auto"
	// GitPolicyApprove holds every plan with changes for `kctl gitops approve`.
	GitPolicyApprove = "approve"
)

// GitDisruptionDelete is the disruption of a plan that deletes a cluster
// (a pruned file); it ranks above every step disruption of pkg/plan.
const GitDisruptionDelete = "delete"

// GitDisruptions are the disruption levels maxDisruption accepts, least
// disruptive first; the first seven are pkg/plan's step disruptions.
func GitDisruptions() []string {
	return []string{"none", "restart-unit", "cert-reissue", "volume-grow", "vip-move", "drain", "etcd-membership", GitDisruptionDelete}
}

// Bounds of a GitSource.
const (
	// MaxGitRepoLen bounds spec.repo.
	MaxGitRepoLen = 1024
	// MaxGitBranchLen bounds spec.branch.
	MaxGitBranchLen = 255
	// MaxGitPathLen bounds spec.path.
	MaxGitPathLen = 1024
	// MinGitInterval and MaxGitInterval bound spec.interval.
	MinGitInterval = 10 * time.Second
	MaxGitInterval = 24 * time.Hour
	// DefaultGitInterval is spec.interval's default.
	DefaultGitInterval = "1m"
	// MaxGitMessageLen bounds the messages status records (errors, plan summaries).
	MaxGitMessageLen = 2048
	// MaxGitOwned bounds how many objects one GitSource may own.
	MaxGitOwned = 1000
)

// GitSource is a git branch and directory the controller follows: the leader
// fetches it, plans each new commit with the same code as `kctl kubernetes
// apply`, and applies the plan or holds it for approval.
type GitSource struct {
	// APIVersion is kcore.dev/v1.
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	// Kind is GitSource.
	Kind string `json:"kind" yaml:"kind"`
	// Metadata names the source.
	Metadata ObjectMeta `json:"metadata" yaml:"metadata"`
	// Spec says what to follow and how.
	Spec GitSourceSpec `json:"spec" yaml:"spec"`
	// Requests are what users asked of the leader: sync now, approve a commit.
	Requests GitRequests `json:"requests,omitzero" yaml:"requests,omitempty"`
	// Status is what the leader saw and did; it is stored apart, as a
	// GitSourceStatus object of the same name, so the leader's writes and
	// the users' never conflict. Set by the controller.
	Status GitSourceStatus `json:"status,omitzero" yaml:"status,omitempty"`
}

// GitRequests are what users asked of the leader.
type GitRequests struct {
	// Sync counts `kctl gitops sync` calls; the leader fetches when it exceeds status.syncHandled.
	Sync int64 `json:"sync,omitempty" yaml:"sync,omitempty"`
	// Approve is the commit `kctl gitops approve` approved.
	Approve string `json:"approve,omitempty" yaml:"approve,omitempty"`
	// ApproveHash is the hash of the pending plan approved: the leader
	// applies the commit's plan only while it is still that plan.
	ApproveHash string `json:"approveHash,omitempty" yaml:"approveHash,omitempty"`
}

// GitSourceSpec says what to follow and how.
type GitSourceSpec struct {
	// Repo is a URL go-git can fetch (https, ssh, git, file) or a local path.
	Repo string `json:"repo" yaml:"repo"`
	// Branch is the branch followed, e.g. main.
	Branch string `json:"branch" yaml:"branch"`
	// Path is the directory in the repository whose manifests are read; "" is the root.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Interval is how often the leader fetches, a Go duration. Default 1m.
	Interval string `json:"interval,omitempty" yaml:"interval,omitempty"`
	// Policy is auto (apply plans within maxDisruption) or approve (hold every plan). Default auto.
	Policy string `json:"policy,omitempty" yaml:"policy,omitempty"`
	// MaxDisruption is the most disruptive step auto applies unapproved:
	// none, restart-unit, cert-reissue, volume-grow, vip-move, drain,
	// etcd-membership or delete. Default none.
	MaxDisruption string `json:"maxDisruption,omitempty" yaml:"maxDisruption,omitempty"`
	// AllowEmpty lets a commit whose directory holds no manifest prune every object the source owns.
	AllowEmpty bool `json:"allowEmpty,omitempty" yaml:"allowEmpty,omitempty"`
}

// GitSourceStatus is what the leader saw and did.
type GitSourceStatus struct {
	// Commit is the last commit whose plan was applied (or had no changes).
	Commit string `json:"commit,omitempty" yaml:"commit,omitempty"`
	// SyncedAt is when Commit was applied, RFC 3339.
	SyncedAt string `json:"syncedAt,omitempty" yaml:"syncedAt,omitempty"`
	// Fetched is the commit the branch pointed at on the last fetch.
	Fetched string `json:"fetched,omitempty" yaml:"fetched,omitempty"`
	// FetchedAt is when the last fetch finished, RFC 3339.
	FetchedAt string `json:"fetchedAt,omitempty" yaml:"fetchedAt,omitempty"`
	// Pending is the plan held for approval or blocked, nil when none.
	Pending *GitPending `json:"pending,omitempty" yaml:"pending,omitempty"`
	// LastError is the last fetch, read, plan or apply error, "" after a good sync.
	LastError string `json:"lastError,omitempty" yaml:"lastError,omitempty"`
	// Conditions are Synced and Fetched, as in Kubernetes.
	Conditions []Condition `json:"conditions,omitempty" yaml:"conditions,omitempty"`
	// SyncHandled is the requests.sync the leader last acted on.
	SyncHandled int64 `json:"syncHandled,omitempty" yaml:"syncHandled,omitempty"`
	// Owned are the objects the source wrote, with the hash of the spec it wrote.
	Owned []GitOwned `json:"owned,omitempty" yaml:"owned,omitempty"`
}

// GitPending is a plan a commit made that was not applied.
type GitPending struct {
	// Commit is the commit planned.
	Commit string `json:"commit" yaml:"commit"`
	// Hash is the hash of what the plan does (its actions, steps and
	// rendered changes, not the index it was computed at); approve applies
	// the plan only while it is the same.
	Hash string `json:"hash" yaml:"hash"`
	// Disruption is the plan's most disruptive step (or delete).
	Disruption string `json:"disruption" yaml:"disruption"`
	// Reason says why it waits: approval or blocked.
	Reason string `json:"reason" yaml:"reason"`
	// Summary lists what the plan does, one line per object.
	Summary []string `json:"summary,omitempty" yaml:"summary,omitempty"`
	// Blocking are the plan's blocking issues.
	Blocking []string `json:"blocking,omitempty" yaml:"blocking,omitempty"`
}

// Reasons of GitPending.
const (
	GitPendingApproval = "approval"
	GitPendingBlocked  = "blocked"
)

// GitOwned is one object a GitSource wrote.
type GitOwned struct {
	// Kind is KubernetesCluster or ClusterUpdate.
	Kind string `json:"kind" yaml:"kind"`
	// Name is the object's name.
	Name string `json:"name" yaml:"name"`
	// SpecHash is SpecHash of the spec as the source left it.
	SpecHash string `json:"specHash" yaml:"specHash"`
}

// Default fills the spec's defaults.
func (g *GitSource) Default() {
	g.APIVersion, g.Kind = APIVersion, KindGitSource
	if g.Spec.Interval == "" {
		g.Spec.Interval = DefaultGitInterval
	}
	if g.Spec.Policy == "" {
		g.Spec.Policy = GitPolicyAuto
	}
	if g.Spec.MaxDisruption == "" {
		g.Spec.MaxDisruption = "none"
	}
}

// IntervalDuration is the parsed interval (DefaultGitInterval when invalid).
func (s GitSourceSpec) IntervalDuration() time.Duration {
	d, err := time.ParseDuration(s.Interval)
	if err != nil || d < MinGitInterval {
		d, _ = time.ParseDuration(DefaultGitInterval)
	}
	return d
}

// Validate checks a defaulted GitSource.
func (g *GitSource) Validate() Issues {
	v := &collector{}
	checkName(v, "metadata.name", g.Metadata.Name)
	s := g.Spec
	bounded := func(path, val string, max int) {
		switch {
		case val == "" && path != "spec.path":
			v.errorf(path, "required")
		case len(val) > max:
			v.errorf(path, "is %d bytes, at most %d", len(val), max)
		case strings.ContainsAny(val, "\x00\n\r"):
			v.errorf(path, "must not hold NUL or line breaks")
		}
	}
	bounded("spec.repo", s.Repo, MaxGitRepoLen)
	bounded("spec.branch", s.Branch, MaxGitBranchLen)
	bounded("spec.path", s.Path, MaxGitPathLen)
	if s.Repo != "" && !gitRepoURL.MatchString(s.Repo) {
		v.errorf("spec.repo", "%q is not an absolute path or a https://, http://, ssh://, git:// or file:// URL", s.Repo)
	}
	if strings.HasPrefix(s.Branch, "-") {
		v.errorf("spec.branch", "must not start with '-'")
	}
	if strings.Contains(s.Branch, "..") || strings.HasPrefix(s.Branch, "refs/") {
		v.errorf("spec.branch", "%q is not a branch name (no '..', no refs/ prefix)", s.Branch)
	}
	for _, part := range strings.Split(s.Path, "/") {
		if part == ".." {
			v.errorf("spec.path", "must stay inside the repository (no '..')")
		}
	}
	if d, err := time.ParseDuration(s.Interval); err != nil {
		v.errorf("spec.interval", "%q is not a duration such as 1m", s.Interval)
	} else if d < MinGitInterval || d > MaxGitInterval {
		v.errorf("spec.interval", "must be between %s and %s, got %s", MinGitInterval, MaxGitInterval, d)
	}
	oneOf(v, "spec.policy", s.Policy, GitPolicyAuto, GitPolicyApprove)
	oneOf(v, "spec.maxDisruption", s.MaxDisruption, GitDisruptions()...)
	return v.issues
}

// DisruptionRank is the position of d in GitDisruptions, -1 when unknown.
func DisruptionRank(d string) int {
	for i, x := range GitDisruptions() {
		if x == d {
			return i
		}
	}
	return -1
}

// SpecHash is the hex SHA-256 of spec's JSON: two specs with the same hash
// are the same.
func SpecHash(spec any) string {
	b, err := json.Marshal(spec)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// StoredSpecHash is SpecHash of the spec of an object's JSON, "" when it
// does not decode: equal specs hash alike however their JSON was laid out.
func StoredSpecHash(data []byte) string {
	var v struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return ""
	}
	var spec any
	if err := json.Unmarshal(v.Spec, &spec); err != nil {
		return ""
	}
	return SpecHash(spec)
}
