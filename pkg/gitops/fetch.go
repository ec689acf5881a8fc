package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Default bounds of a GitFetcher.
const (
	// DefaultFetchTimeout bounds one fetch, reading included.
	DefaultFetchTimeout = 2 * time.Minute
	// DefaultMaxFetchBytes bounds the bytes one fetch writes to the cache.
	DefaultMaxFetchBytes = 256 << 20
	// DefaultMaxFiles bounds the manifest files read from one commit.
	DefaultMaxFiles = 1000
	// DefaultMaxFileBytes bounds one manifest file.
	DefaultMaxFileBytes = 1 << 20
	// DefaultMaxTotalBytes bounds the manifest files of one commit together.
	DefaultMaxTotalBytes = 16 << 20
)

// Errors of a fetch.
var (
	// ErrFetch: the repository could not be fetched or its branch resolved.
	ErrFetch = errors.New("fetch repository")
	// ErrTooLarge: a bound on bytes or files was exceeded.
	ErrTooLarge = errors.New("too large")
)

// Request is what to fetch.
type Request struct {
	// Name is the GitSource's name; it names the cache.
	Name string
	// Repo, Branch and Path are the source's spec.
	Repo, Branch, Path string
}

// File is one manifest file of a commit.
type File struct {
	// Path is the file's path in the repository.
	Path string
	// Data is its content.
	Data []byte
}

// Snapshot is the manifests of the commit a branch points at.
type Snapshot struct {
	// Commit is the commit's full id.
	Commit string
	// Files are the *.yaml, *.yml and *.hcl files under the path, in path
	// order; dotfiles and dot-directories are skipped, as kctl does.
	Files []File
}

// Fetcher fetches a source's branch and reads its manifests.
type Fetcher interface {
	Fetch(ctx context.Context, req Request) (Snapshot, error)
}

// GitFetcher fetches with go-git into bare repositories under Dir.
type GitFetcher struct {
	// Dir holds one bare repository per source and repository URL.
	Dir string
	// Timeout bounds one fetch; 0 is DefaultFetchTimeout.
	Timeout time.Duration
	// MaxFetchBytes bounds the bytes one fetch writes; 0 is DefaultMaxFetchBytes.
	MaxFetchBytes int64
	// MaxFiles, MaxFileBytes and MaxTotalBytes bound the manifests read; 0 is the default.
	MaxFiles      int
	MaxFileBytes  int64
	MaxTotalBytes int64
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// cacheDir names a source's repository: its name and a hash of its URL,
// so a changed URL starts a fresh cache.
func (f *GitFetcher) cacheDir(req Request) string {
	sum := sha256.Sum256([]byte(req.Repo))
	return filepath.Join(f.Dir, req.Name+"-"+hex.EncodeToString(sum[:8]))
}

// Fetch fetches req's branch and reads the manifests of its head commit.
// A local repository (an absolute path or a file:// URL) is read in place,
// with nothing executed; any other URL is fetched into the cache.
func (f *GitFetcher) Fetch(ctx context.Context, req Request) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(f.Timeout, DefaultFetchTimeout))
	defer cancel()
	var repo *git.Repository
	var refName plumbing.ReferenceName
	var err error
	if dir, ok := LocalPath(req.Repo); ok {
		repo, err = git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{})
		if err != nil {
			return Snapshot{}, fmt.Errorf("%w %s: %w", ErrFetch, req.Repo, err)
		}
		refName = plumbing.NewBranchReferenceName(req.Branch)
	} else {
		if repo, err = f.fetch(ctx, req); err != nil {
			return Snapshot{}, err
		}
		refName = plumbing.NewRemoteReferenceName(git.DefaultRemoteName, req.Branch)
	}
	ref, err := repo.Reference(refName, true)
	if err != nil {
		return Snapshot{}, fmt.Errorf("%w %s: branch %s: %w", ErrFetch, req.Repo, req.Branch, err)
	}
	commit, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return Snapshot{}, fmt.Errorf("%w %s: read commit %s: %w", ErrFetch, req.Repo, ref.Hash(), err)
	}
	files, err := f.read(ctx, repo, commit, req.Path)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read commit %s: %w", commit.Hash, err)
	}
	return Snapshot{Commit: commit.Hash.String(), Files: files}, nil
}

// LocalPath returns the directory of a local repository: an absolute path
// or a file:// URL.
func LocalPath(repo string) (string, bool) {
	switch {
	case strings.HasPrefix(repo, "file://"):
		return strings.TrimPrefix(repo, "file://"), true
	case filepath.IsAbs(repo):
		return repo, true
	}
	return "", false
}

// fetch fetches req's branch into its bare cache repository, writing at
// most MaxFetchBytes.
func (f *GitFetcher) fetch(ctx context.Context, req Request) (*git.Repository, error) {
	fs := newLimitFS(osfs.New(f.cacheDir(req), osfs.WithBoundOS()), orDefault(f.MaxFetchBytes, DefaultMaxFetchBytes))
	st := filesystem.NewStorage(fs, cache.NewObjectLRUDefault())
	repo, err := git.Open(st, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.Init(st, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("open cache of %s: %w", req.Name, err)
	}
	remote, err := repo.Remote(git.DefaultRemoteName)
	if errors.Is(err, git.ErrRemoteNotFound) {
		remote, err = repo.CreateRemote(&config.RemoteConfig{Name: git.DefaultRemoteName, URLs: []string{req.Repo}})
	}
	if err != nil {
		return nil, fmt.Errorf("open cache of %s: %w", req.Name, err)
	}
	spec := config.RefSpec(fmt.Sprintf("+refs/heads/%s:refs/remotes/%s/%s", req.Branch, git.DefaultRemoteName, req.Branch))
	err = remote.FetchContext(ctx, &git.FetchOptions{RefSpecs: []config.RefSpec{spec}, Tags: git.NoTags, Force: true})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, fmt.Errorf("%w %s branch %s: %w", ErrFetch, req.Repo, req.Branch, err)
	}
	return repo, nil
}

// read returns the manifest files under dir in commit, bounded; a missing
// dir holds none.
func (f *GitFetcher) read(ctx context.Context, repo *git.Repository, commit *object.Commit, dir string) ([]File, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir != "" {
		tree, err = tree.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
	maxFiles := orDefault(f.MaxFiles, DefaultMaxFiles)
	maxFile, maxTotal := orDefault(f.MaxFileBytes, DefaultMaxFileBytes), orDefault(f.MaxTotalBytes, DefaultMaxTotalBytes)
	var out []File
	var total int64
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if hidden(name) || !manifestName(name) || (entry.Mode != filemode.Regular && entry.Mode != filemode.Executable) {
			continue
		}
		if len(out) == maxFiles {
			return nil, fmt.Errorf("%w: more than %d manifest files under %q", ErrTooLarge, maxFiles, dir)
		}
		blob, err := repo.BlobObject(entry.Hash)
		if err != nil {
			return nil, err
		}
		if blob.Size > maxFile {
			return nil, fmt.Errorf("%w: %s is %d bytes, at most %d", ErrTooLarge, path.Join(dir, name), blob.Size, maxFile)
		}
		if total += blob.Size; total > maxTotal {
			return nil, fmt.Errorf("%w: the manifests under %q are more than %d bytes", ErrTooLarge, dir, maxTotal)
		}
		rd, err := blob.Reader()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(rd, maxFile+1))
		rd.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join(dir, name), Data: data})
	}
	return out, nil
}

// hidden reports whether any element of a slash path starts with a dot.
func hidden(name string) bool {
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// manifestName reports whether name is a manifest file kctl reads.
func manifestName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".hcl":
		return true
	}
	return false
}
