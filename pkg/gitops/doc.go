// Package gitops follows GitSources: on the raft leader it fetches each
// source's branch on its interval (and at once on `kctl gitops sync`),
// reads every manifest under the source's path in the fetched commit,
// plans the commit once with the controller's own planning code (the
// Planner seam, served by pkg/server), and applies the plan when it has no
// blocking issue and its disruption is within the source's policy, else
// holds it for `kctl gitops approve`.
//
// A source owns the objects it created: each carries the source's name and
// the commit that last wrote it in its annotations. A commit prunes only
// owned objects absent from it; a commit whose directory holds no manifest
// prunes nothing unless the source allows empty; an owned cluster already
// being deleted is left out, so it never blocks the rest of the commit.
//
// Fetching is behind the Fetcher interface; GitFetcher fetches with go-git
// into a bare repository in a cache directory, with a timeout and a bound
// on the bytes written, reads the tree straight from the object store
// (no checkout, so no hooks, no symlinks followed) and bounds the files
// it reads.
package gitops
