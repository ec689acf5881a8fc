package apiv1

import (
	"net/url"

	"kcore.dev/kcore/pkg/api"
)

// PathGitOps is the prefix of the GitSource routes.
const PathGitOps = "/v1/gitops"

// GitSourcePath is the path of one GitSource.
func GitSourcePath(name string) string { return PathGitOps + "/" + url.PathEscape(name) }

// GitSyncPath is the path that asks the leader to fetch a GitSource now.
func GitSyncPath(name string) string { return GitSourcePath(name) + "/sync" }

// GitApprovePath is the path that approves a GitSource's pending plan.
func GitApprovePath(name string) string { return GitSourcePath(name) + "/approve" }

// GitApproveRequest approves the pending plan of one commit.
type GitApproveRequest struct {
	// Commit is the pending commit approved (the full id or a prefix of at least 7).
	Commit string `json:"commit"`
}

// GitDrift is one object a GitSource owns whose stored spec is no longer
// the one the source wrote: it was changed outside git.
type GitDrift struct {
	// Kind and Name name the object.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Reason is changed (its spec differs) or deleted (it is gone).
	Reason string `json:"reason"`
}

// Reasons of GitDrift.
const (
	DriftChanged = "changed"
	DriftDeleted = "deleted"
)

// GitSourceView is a GitSource as the status routes return it: the stored
// object and its drift, computed when read.
type GitSourceView struct {
	// Source is the stored GitSource.
	Source api.GitSource `json:"source"`
	// Drift are the owned objects changed outside git.
	Drift []GitDrift `json:"drift,omitempty"`
	// Index is the stored object's modify index.
	Index uint64 `json:"index"`
}

// GitStamp names the GitSource and commit an apply comes from.
type GitStamp struct {
	// Source is the GitSource's name.
	Source string
	// Commit is the commit's full id.
	Commit string
}
