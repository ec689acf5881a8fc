package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

// condEtcdRestored is the orchestrator's condition about the last etcd restore.
const condEtcdRestored = "EtcdRestored"

// newKubernetesEtcdCmd is `kctl kubernetes etcd`: snapshots and disaster
// recovery of a cluster's etcd.
func newKubernetesEtcdCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Take, list and restore etcd snapshots of a cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newEtcdSnapshotCmd(s), newEtcdSnapshotsCmd(s), newEtcdRestoreCmd(s))
	return cmd
}

func newEtcdSnapshotCmd(s Streams) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "snapshot NAME",
		Short: "Take an etcd snapshot of a cluster now and keep it on the controller; list and export snapshots",
		Long: `Ask the controller leader to stream a snapshot from the cluster's etcd (the
first control plane that answers), verify it, and store it gzipped and sealed
under the controller key (a snapshot holds the cluster's Kubernetes Secrets)
as a file in the leader's data directory; raft records only its name,
revision, size, SHA-256 and the replica holding it. The newest five
unscheduled snapshots of each cluster are kept (scheduled backups follow
spec.etcdBackup). Needs the operator role.

The subcommands list the snapshots and export one to a file.`,
		Example: `  kctl kubernetes etcd snapshot lab
  kctl kubernetes etcd snapshot lab --reason before-maintenance
  kctl kubernetes etcd snapshot list lab
  kctl kubernetes etcd snapshot export lab 20261130T001500Z-scheduled -o lab.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			info, err := c.TakeEtcdSnapshot(cmdContext(cmd), args[0], reason)
			if err != nil {
				return fmt.Errorf("take etcd snapshot of %s: %w", args[0], err)
			}
			_, err = fmt.Fprintf(s.Out, "etcd snapshot %s stored (%s, revision %d, from %s, sha256 %s)\n",
				info.Name, humanBytes(info.SizeBytes), info.Revision, info.Member, info.SHA256)
			return err
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the snapshot is taken; recorded and ends its name (default manual)")
	cmd.AddCommand(newEtcdSnapshotListCmd(s), newEtcdSnapshotExportCmd(s))
	return cmd
}

func newEtcdSnapshotsCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "snapshots NAME",
		Short:   "List the etcd snapshots kept for a cluster",
		Long:    `Print the cluster's stored etcd snapshots, oldest first: name, when it was taken, why, its size and the etcd revision it holds. Never their content.`,
		Example: `  kctl kubernetes etcd snapshots lab`,
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
			if err := row(tw, "NAME", "TAKEN", "REASON", "SIZE", "REVISION"); err != nil {
				return err
			}
			for _, i := range list {
				if err := row(tw, i.Name, i.TakenAt, i.Reason, humanBytes(i.SizeBytes), strconv.FormatInt(i.Revision, 10)); err != nil {
					return err
				}
			}
			return tw.Flush()
		},
	}
}

func newEtcdRestoreCmd(s Streams) *cobra.Command {
	var f applyFlags
	var from, fromFile string
	cmd := &cobra.Command{
		Use:   "restore NAME --from SNAPSHOT | --from-file FILE",
		Short: "Restore a cluster's etcd from a stored snapshot after quorum loss",
		Long: `Disaster recovery for a cluster whose etcd lost quorum (or its data): print
what will happen, ask y/n, and record the restore on the cluster. The
orchestrator then stops etcd on every control plane, restores the same
snapshot into a new data directory on each of them (etcd's multi-member
recovery: one new cluster of the same members), starts etcd on it and
restarts the Kubernetes control plane. Everything written to the cluster
after the snapshot was taken is lost; the old data directories are kept.

With --from-file the snapshot is an etcd database file (one that kctl
kubernetes etcd snapshot export wrote, or etcdutl saved): it is uploaded to
the controller, verified and kept as a snapshot with reason imported, then
restored like any other.

With --wait the command follows the cluster until the restore finished and
the cluster is ready (exit 0), or gives up after --timeout (exit 1).
Needs the operator role.`,
		Example: `  kctl kubernetes etcd snapshots lab
  kctl kubernetes etcd restore lab --from 20261130T001500Z-manual
  kctl kubernetes etcd restore lab --from lab/20261130T001500Z-manual --yes --wait
  kctl kubernetes etcd restore lab --from-file lab.db --yes --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case from != "" && fromFile != "":
				return errors.New("give --from SNAPSHOT or --from-file FILE, not both")
			case fromFile != "":
				name, err := importSnapshotFile(cmd, s, args[0], fromFile)
				if err != nil {
					return err
				}
				from = name
			case from == "":
				return errors.New("--from SNAPSHOT or --from-file FILE is required (kctl kubernetes etcd snapshot list " + args[0] + " lists the snapshots)")
			}
			return runEtcdRestore(cmd, s, args[0], from, f)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the snapshot to restore, as listed by kctl kubernetes etcd snapshot list")
	cmd.Flags().StringVar(&fromFile, "from-file", "", "an etcd snapshot file to upload and restore (as snapshot export writes it)")
	f.bind(cmd, true)
	return cmd
}

func runEtcdRestore(cmd *cobra.Command, s Streams, name, from string, f applyFlags) error {
	c, _, err := ctlClient(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := cmdContext(cmd)
	kc, _, err := getCluster(cmd, c, name)
	if err != nil {
		return err
	}
	list, err := c.EtcdSnapshots(ctx, name)
	if err != nil {
		return fmt.Errorf("list etcd snapshots of %s: %w", name, err)
	}
	full := from
	if !strings.HasPrefix(full, name+"/") {
		full = name + "/" + from
	}
	var snap *apiv1.EtcdSnapshotInfo
	for i := range list {
		if list[i].Name == full {
			snap = &list[i]
		}
	}
	if snap == nil {
		return fmt.Errorf("cluster %s has no etcd snapshot %q (kctl kubernetes etcd snapshots %s lists them)", name, from, name)
	}
	if err := printRestorePlan(s, kc, snap); err != nil {
		return err
	}
	if !f.yes {
		if err := confirm(s, "Restore etcd from this snapshot?", "--yes"); err != nil {
			return err
		}
	}
	start := time.Now()
	resp, err := c.RestoreEtcd(ctx, name, full)
	if err != nil {
		return fmt.Errorf("restore etcd of %s: %w", name, err)
	}
	if _, err := fmt.Fprintf(s.Out, "etcd restore of %q from %s recorded (generation %d)\n", name, resp.Snapshot, resp.Generation); err != nil {
		return err
	}
	if !f.wait {
		_, err := fmt.Fprintf(s.Out, "follow it with: kctl kubernetes health %s\n", name)
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if err := followRestore(wctx, s, c, name, resp.Generation, f.timeout); err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.Out, "cluster %q is ready on etcd generation %d, %s after the restore was requested\n", name, resp.Generation, time.Since(start).Round(time.Second))
	return err
}

// importSnapshotFile uploads the etcd snapshot file path as a snapshot of
// cluster and returns its stored name.
func importSnapshotFile(cmd *cobra.Command, s Streams, cluster, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read etcd snapshot file: %w", err)
	}
	defer f.Close()
	c, _, err := ctlClient(cmd)
	if err != nil {
		return "", err
	}
	defer c.Close()
	info, err := c.ImportEtcdSnapshot(cmdContext(cmd), cluster, f)
	if err != nil {
		return "", fmt.Errorf("import etcd snapshot %s into %s: %w", path, cluster, err)
	}
	if _, err := fmt.Fprintf(s.Out, "etcd snapshot file %s imported as %s (revision %d, sha256 %s)\n", path, info.Name, info.Revision, info.SHA256); err != nil {
		return "", err
	}
	return info.Name, nil
}

// printRestorePlan says what a restore does before it is confirmed.
func printRestorePlan(s Streams, kc *api.KubernetesCluster, snap *apiv1.EtcdSnapshotInfo) error {
	var cps []string
	for _, n := range kc.Spec.ControlPlaneNodes {
		cps = append(cps, n.NodeID)
	}
	gen := kc.Status.EtcdGeneration + 1
	lines := []string{
		fmt.Sprintf("Restore the etcd of cluster %q (phase %s) from snapshot %s", kc.Metadata.Name, orUnknown(kc.Status.Phase), snap.Name),
		fmt.Sprintf("  taken %s (%s) from %s: revision %d, %s, sha256 %s", snap.TakenAt, snap.Reason, snap.Member, snap.Revision, humanBytes(snap.SizeBytes), snap.SHA256),
		"",
		"This will:",
		fmt.Sprintf("  1. stop etcd on every control plane: %s (the Kubernetes API is down until step 3 ends)", strings.Join(cps, ", ")),
		fmt.Sprintf("  2. restore the snapshot on every control plane into a new data directory (etcd generation %d); the current data is kept, unused", gen),
		"  3. start etcd on the restored data as one new cluster of the same members, then restart kube-apiserver, kube-controller-manager and kube-scheduler",
		"",
		fmt.Sprintf("Every write to the cluster after %s is lost.", snap.TakenAt),
	}
	_, err := fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
	return err
}

// followRestore follows the cluster with blocking queries until its etcd
// runs generation gen with no restore left in progress and it is ready.
func followRestore(ctx context.Context, s Streams, c *client.Client, name string, gen int, timeout time.Duration) error {
	var index uint64
	phase := ""
	for {
		wait := waitPoll
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, max(time.Until(dl), time.Millisecond))
		}
		o, idx, err := c.GetWith(ctx, api.KindKubernetesCluster, name, client.ReadOptions{Index: index, Wait: wait})
		switch {
		case ctx.Err() != nil:
			return &ExitError{Code: 1, Err: fmt.Errorf("gave up waiting for the etcd restore of %q after %s: the cluster is %s", name, timeout, orUnknown(phase))}
		case err != nil:
			return fmt.Errorf("follow cluster %s: %w", name, err)
		}
		var kc api.KubernetesCluster
		if err := json.Unmarshal(o.Data, &kc); err != nil {
			return fmt.Errorf("decode cluster %s: %w", name, err)
		}
		if kc.Status.Phase != phase {
			phase = kc.Status.Phase
			if _, err := fmt.Fprintf(s.Out, "cluster %q: phase %s\n", name, orUnknown(phase)); err != nil {
				return err
			}
			if phase == api.PhaseDegraded {
				for _, cond := range kc.Status.Conditions {
					if cond.Status == "False" {
						if _, err := fmt.Fprintf(s.Out, "  failing: %s: %s %s\n", cond.Type, cond.Reason, cond.Message); err != nil {
							return err
						}
					}
				}
			}
		}
		st := kc.Status
		if st.EtcdRestore == nil && st.EtcdGeneration < gen {
			msg := "the restore was abandoned"
			for _, cond := range st.Conditions {
				if cond.Type == condEtcdRestored {
					msg = cond.Message
				}
			}
			return &ExitError{Code: 1, Err: fmt.Errorf("etcd restore of %q: %s", name, msg)}
		}
		if st.EtcdRestore == nil && st.EtcdGeneration >= gen && st.Phase == api.PhaseReady {
			return nil
		}
		index = idx
	}
}

// humanBytes prints n in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 2 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB"}[i])
}
