package runtime

import (
	"bytes"
	"fmt"
	"os"
	"path"

	"kcore.dev/kcore/pkg/confined"
)

// MaxOwnFileBytes caps a file of the runtime's own (a unit file, a state
// file) read back from under the root.
const MaxOwnFileBytes = 16 << 20

// Names of the runtimes' files beneath the root.
const (
	supervisorStateRel = "var/lib/kcore/supervisor.json"
	nixosSwitchedRel   = "var/lib/kcore/nixos-switched"
	logDirRel          = "var/log/kcore"
	unitDirRel         = "etc/systemd/system"
)

// The runtimes read and write their files through a confined handle on the
// root: every name beneath it is looked up without following a symlink, so
// a directory a unit swapped for one leads nowhere.

// writeBeneath replaces the file rel beneath root atomically (temporary
// file, chmod, fsync, rename, fsync of the directory).
func writeBeneath(root, rel string, data []byte, mode os.FileMode) error {
	d, err := confined.Open(root)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	defer d.Close()
	if _, err := d.WriteFile(rel, bytes.NewReader(data), mode); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// readBeneath reads the regular file rel beneath root, up to MaxOwnFileBytes.
func readBeneath(root, rel string) ([]byte, error) {
	d, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	defer d.Close()
	return d.ReadFile(rel, MaxOwnFileBytes)
}

// removeBeneath deletes the file rel beneath root; a missing one is fine.
func removeBeneath(root, rel string) error {
	d, err := confined.Open(root)
	if err != nil {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	defer d.Close()
	return d.Remove(rel)
}

// appendBeneath opens the file rel beneath root for appending, creating it
// (and its directory, 0755) with mode.
func appendBeneath(root, rel string, mode os.FileMode) (*os.File, error) {
	d, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	defer d.Close()
	dir, err := d.Sub(path.Dir(rel), true, 0o755)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	defer dir.Close()
	return dir.OpenAppend(path.Base(rel), mode)
}

// readDirBeneath lists the directory rel beneath root.
func readDirBeneath(root, rel string) ([]os.DirEntry, error) {
	d, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", rel, err)
	}
	defer d.Close()
	return d.ReadDir(rel)
}
