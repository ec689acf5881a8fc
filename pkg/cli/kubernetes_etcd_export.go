package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
)

// newEtcdSnapshotListCmd is `kctl kubernetes etcd snapshot list NAME`.
func newEtcdSnapshotListCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "list NAME",
		Short: "List a cluster's etcd snapshots with their checksums and where they are kept",
		Long: `Print the cluster's stored etcd snapshots, oldest first: name, when and why it
was taken (scheduled for spec.etcdBackup's), the etcd revision, the size, the
SHA-256 of the etcd database file (what an export's checksum must be), and
where the content is kept: controller (a sealed file on the listed replicas)
or raft (snapshots taken before files). Never their content. A cluster whose
spec.etcdBackup.target is nodes keeps its scheduled backups on its control
planes, in nodePath: a note on stderr says so.`,
		Example: `  kctl kubernetes etcd snapshot list lab`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			list, err := c.EtcdSnapshots(cmdContext(cmd), args[0])
			if err != nil {
				return fmt.Errorf("list etcd snapshots of %s: %w", args[0], err)
			}
			tw := newTable(s.Out)
			if err := row(tw, "NAME", "TAKEN", "REASON", "REVISION", "SIZE", "SHA256", "KEPT ON"); err != nil {
				return err
			}
			for _, i := range list {
				where := orDefault(i.Location, apiv1.EtcdSnapshotInRaft)
				if len(i.Replicas) > 0 {
					where += " (" + strings.Join(i.Replicas, ", ") + ")"
				}
				short := strings.TrimPrefix(i.Name, i.Cluster+"/")
				if err := row(tw, short, i.TakenAt, i.Reason, strconv.FormatInt(i.Revision, 10), humanBytes(i.SizeBytes), i.SHA256, where); err != nil {
					return err
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if kc, _, err := getCluster(cmd, c, args[0]); err == nil && kc.Spec.EtcdBackup != nil && kc.Spec.ControllerBackups() == nil {
				fmt.Fprintf(s.Err, "%s keeps its scheduled backups on each control plane, in %s (not listed here: the controller does not see them)\n",
					args[0], kc.Spec.EtcdBackup.NodePath)
			}
			return nil
		},
	}
}

// newEtcdSnapshotExportCmd is `kctl kubernetes etcd snapshot export NAME SNAPSHOT -o FILE`.
func newEtcdSnapshotExportCmd(s Streams) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export NAME SNAPSHOT -o FILE",
		Short: "Write a stored etcd snapshot to a file",
		Long: `Stream the stored snapshot from the controller leader (which fetches the file
from the replica that holds it when it does not) into FILE: the etcd database
file, as etcdutl snapshot restore reads it, in clear. It holds the cluster's
Kubernetes Secrets: keep it as you keep the controller's key. The content is
checked against the SHA-256 recorded when the snapshot was taken; FILE is
written through a temporary file and only appears when it matches. Needs the
operator role. kctl kubernetes etcd restore NAME --from-file FILE restores it.`,
		Example: `  kctl kubernetes etcd snapshot export lab 20261130T001500Z-scheduled -o lab.db`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("-o FILE is required")
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
			if err != nil {
				return fmt.Errorf("export etcd snapshot: %w", err)
			}
			defer os.Remove(tmp.Name())
			info, err := c.ExportEtcdSnapshot(cmdContext(cmd), args[0], args[1], tmp)
			if err != nil {
				tmp.Close()
				return fmt.Errorf("export etcd snapshot %s of %s: %w", args[1], args[0], err)
			}
			if err := tmp.Sync(); err != nil {
				tmp.Close()
				return fmt.Errorf("export etcd snapshot: %w", err)
			}
			if err := tmp.Close(); err != nil {
				return fmt.Errorf("export etcd snapshot: %w", err)
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return fmt.Errorf("export etcd snapshot: %w", err)
			}
			_, err = fmt.Fprintf(s.Out, "etcd snapshot %s written to %s (%s, revision %d, sha256 %s)\n",
				info.Name, out, humanBytes(info.SizeBytes), info.Revision, info.SHA256)
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (created with mode 0600)")
	return cmd
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
