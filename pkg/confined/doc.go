// Package confined does file operations beneath an open directory handle.
//
// Every name is resolved by the kernel relative to the handle with openat2
// and RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS: a ".."
// that climbs out, an absolute name, or a symlink at any component —
// present before the call or swapped in while it runs — fails the call
// (ErrEscape) instead of leading outside the directory. Directories are
// created and opened one component at a time from the handle, files are
// written through a temporary file renamed within the already-opened
// parent directory, and modes are set on the open file, so no step looks a
// path up twice.
//
// It needs Linux 5.6 or later (openat2); on an older kernel every call
// fails rather than fall back to following symlinks.
package confined
