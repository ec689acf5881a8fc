package gitops

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a real repository with files (name → content; a content
// starting with "->" makes a symlink to the rest) in one commit on main.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIP: these tests need the git binary (Debian package git)")
	}
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if len(content) > 2 && content[:2] == "->" {
			err = os.Symlink(content[2:], p)
		} else {
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func paths(s Snapshot) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

// Only regular manifest files under the path are read: no symlink (which
// could point outside the repository), no dotfile, no other extension.
func TestFetchReadsOnlyManifestsUnderThePath(t *testing.T) {
	dir := gitRepo(t, map[string]string{
		"c/a.yaml": "a", "c/sub/b.hcl": "b", "c/readme.md": "r", "c/.hidden.yaml": "h",
		"c/.dir/d.yaml": "d", "c/link.yaml": "->/etc/passwd", "other.yaml": "o",
	})
	f := &GitFetcher{Dir: t.TempDir()}
	snap, err := f.Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main", Path: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(snap); !slices.Equal(got, []string{"c/a.yaml", "c/sub/b.hcl"}) || len(snap.Commit) != 40 {
		t.Fatalf("files %v commit %q", got, snap.Commit)
	}
	// A second fetch of the same cache finds the same commit.
	again, err := f.Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main", Path: "c"})
	if err != nil || again.Commit != snap.Commit {
		t.Fatalf("refetch = %v, %v", again.Commit, err)
	}
}

// MaxFiles manifest files are read; one more is refused.
func TestFetchFileCountBound(t *testing.T) {
	files := map[string]string{}
	for i := range 3 {
		files[fmt.Sprintf("m%d.yaml", i)] = "x"
	}
	dir := gitRepo(t, files)
	if _, err := (&GitFetcher{Dir: t.TempDir(), MaxFiles: 3}).Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main"}); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	_, err := (&GitFetcher{Dir: t.TempDir(), MaxFiles: 2}).Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v, want ErrTooLarge", err)
	}
}

// A manifest of MaxFileBytes is read; one byte more is refused.
func TestFetchFileSizeBound(t *testing.T) {
	dir := gitRepo(t, map[string]string{"m.yaml": "0123456789"})
	if _, err := (&GitFetcher{Dir: t.TempDir(), MaxFileBytes: 10}).Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main"}); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	_, err := (&GitFetcher{Dir: t.TempDir(), MaxFileBytes: 9}).Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "main"})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v, want ErrTooLarge", err)
	}
}

// serveHTTP serves a bare copy of the repository at dir over git's smart
// HTTP protocol (git http-backend) on loopback and returns its URL.
func serveHTTP(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--bare", dir, filepath.Join(root, "repo.git")).CombinedOutput(); err != nil {
		t.Fatalf("git clone --bare: %v\n%s", err, out)
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend")
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv.URL + "/repo.git"
}

// A repository larger than MaxFetchBytes is refused while it is fetched
// over HTTP; under the bound it is fetched into the cache.
func TestFetchBytesBound(t *testing.T) {
	big := make([]byte, 256<<10)
	_, _ = rand.Read(big)
	url := serveHTTP(t, gitRepo(t, map[string]string{"blob.bin": string(big), "m.yaml": "x"}))
	_, err := (&GitFetcher{Dir: t.TempDir(), MaxFetchBytes: 64 << 10}).Fetch(t.Context(), Request{Name: "s", Repo: url, Branch: "main"})
	if !errors.Is(err, ErrFetch) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("fetch = %v, want ErrFetch and ErrTooLarge", err)
	}
	snap, err := (&GitFetcher{Dir: t.TempDir(), MaxFetchBytes: 1 << 20}).Fetch(t.Context(), Request{Name: "s", Repo: url, Branch: "main"})
	if err != nil || !slices.Equal(paths(snap), []string{"m.yaml"}) {
		t.Fatalf("under the bound: %v, %v", paths(snap), err)
	}
}

// A server that accepts and never answers is given up on after Timeout.
func TestFetchTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	f := &GitFetcher{Dir: t.TempDir(), Timeout: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err = f.Fetch(ctx, Request{Name: "s", Repo: "http://" + ln.Addr().String() + "/repo.git", Branch: "main"})
	if !errors.Is(err, ErrFetch) || ctx.Err() != nil {
		t.Fatalf("fetch = %v (test context %v), want ErrFetch before the test's own deadline", err, ctx.Err())
	}
}

// A missing branch is a fetch error.
func TestFetchMissingBranch(t *testing.T) {
	dir := gitRepo(t, map[string]string{"m.yaml": "x"})
	_, err := (&GitFetcher{Dir: t.TempDir()}).Fetch(t.Context(), Request{Name: "s", Repo: dir, Branch: "nope"})
	if !errors.Is(err, ErrFetch) {
		t.Fatalf("fetch = %v, want ErrFetch", err)
	}
}
