package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
)

// The git source the GitOps scenario follows.
const (
	gitSource = "lab-fleet"
	// gitInterval is how often the leader fetches it: the scenario types no
	// kctl apply and no sync, so the fetch is what brings each commit.
	gitInterval = "10s"
	// gitTimeout bounds each convergence after a commit.
	gitTimeout = 5 * time.Minute
)

// testGitOpsAddsWorker: the lab manifest committed to a local git
// repository that the controllers follow (kctl gitops add, policy auto up
// to a drain) is adopted without a change; a commit adding the spare
// namespace as a worker makes the cluster converge to four Ready nodes
// with no kctl apply typed, and a commit removing it brings it back to
// three. Removing the source leaves the cluster as it is.
func testGitOpsAddsWorker(t *testing.T, l *lab) {
	eventually(t, "cluster ready before the source", fieldReadyTimeout, l.healthy)
	repo := t.TempDir()
	dir := filepath.Join(repo, "clusters")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := l.labManifest(t)
	l.git(t, repo, "init", "-q", "-b", "main")
	head := l.commit(t, repo, dir, src, "lab as applied")
	t.Cleanup(func() { _, _ = l.kctl(30*time.Second, "gitops", "remove", gitSource) })
	if out, err := l.kctl(30*time.Second, "gitops", "add", gitSource, "--repo", repo, "--branch", "main", "--path", "clusters",
		"--interval", gitInterval, "--policy", "auto", "--max-disruption", "drain"); err != nil {
		t.Fatalf("kctl gitops add: %v\n%s", err, out)
	}
	l.waitSynced(t, head)

	withWorker := edit(t, src, "  highAvailability:", "  workerNodes:\n    - nodeId: "+spareNode+"\n      advertiseAddress: "+spareAddr+"\n      iface: eth0\n  highAvailability:")
	start := time.Now()
	head = l.commit(t, repo, dir, withWorker, "lab: add worker "+spareNode)
	l.waitSynced(t, head)
	eventually(t, "four nodes Ready after the commit", gitTimeout, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3", spareNode) })
	eventually(t, "cluster ready with the worker", gitTimeout, l.healthy)
	t.Logf("commit adding %s converged in %s", spareNode, time.Since(start).Round(100*time.Millisecond))

	start = time.Now()
	head = l.commit(t, repo, dir, src, "lab: remove worker "+spareNode)
	l.waitSynced(t, head)
	eventually(t, "three nodes after the commit", gitTimeout, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3") })
	eventually(t, "cluster ready without the worker", gitTimeout, l.healthy)
	t.Logf("commit removing %s converged in %s", spareNode, time.Since(start).Round(100*time.Millisecond))

	if out, err := l.kctl(30*time.Second, "gitops", "remove", gitSource); err != nil {
		t.Fatalf("kctl gitops remove: %v\n%s", err, out)
	}
	if err := l.healthy(); err != nil {
		t.Errorf("the cluster after its source was removed: %v", err)
	}
}

// git runs git in repo with a fixed identity.
func (l *lab) git(t *testing.T, repo string, args ...string) string {
	t.Helper()
	out, err := run(30*time.Second, []string{"GIT_AUTHOR_NAME=kcore e2e", "GIT_AUTHOR_EMAIL=e2e@kcore.invalid", "GIT_COMMITTER_NAME=kcore e2e", "GIT_COMMITTER_EMAIL=e2e@kcore.invalid"},
		append([]string{"git", "-C", repo}, args...)...)
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

// commit writes src as dir/lab.yaml, commits it and returns the commit id.
func (l *lab) commit(t *testing.T, repo, dir, src, msg string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l.git(t, repo, "add", "-A")
	l.git(t, repo, "commit", "-q", "-m", msg)
	return l.git(t, repo, "rev-parse", "HEAD")
}

// waitSynced waits until the source says it applied commit, failing at once
// when it holds the commit for approval or as blocked.
func (l *lab) waitSynced(t *testing.T, commit string) {
	t.Helper()
	eventually(t, "the source synced to "+commit[:12], gitTimeout, func() error {
		out, err := l.kctl(30*time.Second, "gitops", "status", gitSource, "-o", "json")
		if err != nil {
			return err
		}
		var v apiv1.GitSourceView
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("decode kctl gitops status -o json: %v\n%s", err, out)
		}
		st := v.Source.Status
		if p := st.Pending; p != nil && p.Commit == commit {
			t.Fatalf("commit %s held (%s, disruption %s): %v %v", commit[:12], p.Reason, p.Disruption, p.Summary, p.Blocking)
		}
		if st.Commit != commit {
			return fmt.Errorf("synced %q, fetched %q, last error %q", st.Commit, st.Fetched, st.LastError)
		}
		return nil
	})
}
