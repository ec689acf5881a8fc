package client

import (
	"context"
	"net/http"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// PutGitSource creates the GitSource name or replaces its spec. It is
// applied at most once, as Put is.
func (c *Client) PutGitSource(ctx context.Context, name string, spec api.GitSourceSpec) (uint64, error) {
	return c.put(ctx, request{method: http.MethodPut, path: apiv1.GitSourcePath(name), once: true}, spec)
}

// DeleteGitSource stops following name; the objects it wrote stay.
func (c *Client) DeleteGitSource(ctx context.Context, name string) (uint64, error) {
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, request{method: http.MethodDelete, path: apiv1.GitSourcePath(name), once: true}, nil, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// SyncGitSource asks the leader to fetch name now.
func (c *Client) SyncGitSource(ctx context.Context, name string) (uint64, error) {
	var out apiv1.WriteResponse
	if _, err := c.call(ctx, request{method: http.MethodPost, path: apiv1.GitSyncPath(name), once: true}, nil, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// ApproveGitCommit approves the pending plan of commit (a prefix of at
// least 7 characters will do).
func (c *Client) ApproveGitCommit(ctx context.Context, name, commit string) (uint64, error) {
	var out apiv1.WriteResponse
	req := request{method: http.MethodPost, path: apiv1.GitApprovePath(name), once: true}
	if _, err := c.call(ctx, req, apiv1.GitApproveRequest{Commit: commit}, &out); err != nil {
		return 0, err
	}
	return out.Index, nil
}

// GitSource reads one GitSource with its status and drift.
func (c *Client) GitSource(ctx context.Context, name string) (apiv1.GitSourceView, error) {
	var out apiv1.GitSourceView
	if _, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.GitSourcePath(name)}, nil, &out); err != nil {
		return apiv1.GitSourceView{}, err
	}
	return out, nil
}

// GitSources lists every GitSource with its status and drift.
func (c *Client) GitSources(ctx context.Context) ([]apiv1.GitSourceView, error) {
	var out []apiv1.GitSourceView
	if _, err := c.call(ctx, request{method: http.MethodGet, path: apiv1.PathGitOps}, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
