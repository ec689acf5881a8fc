package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// ErrReleaseMissing is returned when a unit pinned to a release (api.Unit.Version)
// names a binary that release's directory does not hold.
var ErrReleaseMissing = errors.New("release binary missing")

// UnitBinDir is the directory a unit's bare argv[0] comes from:
// <releasesDir>/<Version> for a pinned unit when releasesDir is set, else binDir.
func UnitBinDir(u api.Unit, binDir, releasesDir string) string {
	if u.Version != "" && releasesDir != "" {
		return filepath.Join(releasesDir, u.Version)
	}
	return binDir
}

// BinaryPath resolves a unit's argv[0]. A pinned unit's bare argv[0] must be
// an executable in <releasesDir>/<Version>: there is no fallback to $PATH,
// so a node never runs another release than the one it was told to. Other
// units search binDir, then $PATH.
func BinaryPath(u api.Unit, binDir, releasesDir string) (string, error) {
	if len(u.Argv) == 0 {
		return "", fmt.Errorf("resolve %s: %w: no argv", u.Name, ErrInvalidUnit)
	}
	name := u.Argv[0]
	if u.Version == "" || releasesDir == "" || strings.Contains(name, "/") {
		return execrun.LookPath(name, []string{binDir})
	}
	if strings.Contains(u.Version, "/") || u.Version == ".." || u.Version == "." {
		return "", fmt.Errorf("resolve %s: %w: release %q", u.Name, ErrInvalidUnit, u.Version)
	}
	p := filepath.Join(releasesDir, u.Version, name)
	st, err := os.Stat(p)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("resolve %s: %s of release %s is not installed at %s: %w", u.Name, name, u.Version, p, ErrReleaseMissing)
	}
	return p, nil
}
