package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

func newControllerSnapshotCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save the controller state to a file, or restore it from one",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newSnapshotSaveCmd(s), newSnapshotRestoreCmd(s))
	return cmd
}

func newSnapshotSaveCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "save FILE",
		Short: "Save a snapshot of the controller state to FILE",
		Long: `Save a snapshot of the whole controller state (every object, status and audit
entry; secrets stay encrypted) to FILE, written 0600.`,
		Example: `  kctl controller snapshot save kcore-$(date +%F).snap`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			path := args[0]
			tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
			if err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
			defer func() { _ = os.Remove(tmp.Name()) }()
			n, err := c.SnapshotSave(cmdContext(cmd), tmp)
			if err == nil {
				err = tmp.Sync()
			}
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				return fmt.Errorf("save snapshot: %w", err)
			}
			_, err = fmt.Fprintf(s.Out, "saved a snapshot of %d bytes to %s\n", n, path)
			return err
		},
	}
}

func newSnapshotRestoreCmd(s Streams) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the controller state with a snapshot",
		Long: `Replace the whole controller state with the snapshot in FILE, on every replica.

Everything written since the snapshot was taken is lost, so kctl asks first;
--yes skips the question (and is required when stdin is not a terminal). A
snapshot written by a newer kcore schema than the controllers read is refused.`,
		Example: `  kctl controller snapshot restore kcore-2026-11-29.snap`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, x, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("restore snapshot: %w", err)
			}
			defer func() { _ = f.Close() }()
			if !yes {
				q := fmt.Sprintf("Replace the whole state of context %q with %s? Everything written since it was taken is lost.", x.Name, args[0])
				if err := confirm(s, q, "--yes"); err != nil {
					return fmt.Errorf("restore snapshot: %w", err)
				}
			}
			if err := c.SnapshotRestore(cmdContext(cmd), f); err != nil {
				return fmt.Errorf("restore snapshot: %w", err)
			}
			_, err = fmt.Fprintf(s.Out, "restored %s\n", args[0])
			return err
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
