package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// etcdBackupRetry is how long the node's backup loop waits after a failed
// pass (or its interval, when shorter).
const etcdBackupRetry = time.Minute

// etcdBackupFlags are the flags of kcore-node-agent etcd-backup, named as
// render.EtcdBackupArgs writes them.
type etcdBackupFlags struct {
	args   render.EtcdBackupArgs
	maxAge time.Duration
	once   bool
}

func newAgentEtcdBackupCmd(s Streams, fl *agentFlags) *cobra.Command {
	var b etcdBackupFlags
	cmd := &cobra.Command{
		Use:   render.EtcdBackupCommand + " --cluster NAME --endpoint URL --cacert F --cert F --key F --dir DIR",
		Short: "Take this control plane's scheduled etcd backups (the unit spec.etcdBackup target nodes renders)",
		Long: `Takes a snapshot of the local etcd member every --interval, verifies it (bbolt opens it,
its revision is read), writes it to DIR/etcd-CLUSTER-TAKEN.db with a .sha256 file beside it
(sha256sum -c checks it), and drops the backups beyond --keep or older than --max-age (never
the newest). DIR must be in ` + api.NodeBackupRoot + `, and no name beneath that directory, DIR's own
components included, is followed through a symlink. The certificate files are read again for every snapshot, so a renewal needs no
restart; SIGHUP is ignored. The controller renders this as a unit on every control plane of a
cluster whose spec.etcdBackup.target is nodes; run it by hand with --once.`,
		Example: `  kcore-node-agent etcd-backup --cluster lab --endpoint https://127.0.0.1:2379 \
    --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/apiserver-etcd-client.crt \
    --key /etc/kubernetes/pki/apiserver-etcd-client.key --dir /var/backups/kcore/etcd --once`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := fl.logger(s.Err)
			if err != nil {
				return err
			}
			nb, err := b.backups()
			if err != nil {
				return err
			}
			signal.Ignore(syscall.SIGHUP)
			ctx, stop := signalContext(cmd)
			defer stop()
			for {
				took, dropped, err := nb.Pass(ctx)
				if took != nil {
					log.Info("etcd backup kept", "file", took.Name, "sha256", took.SHA256, "bytes", took.Size)
				}
				for _, d := range dropped {
					log.Info("etcd backup dropped by retention", "file", d)
				}
				wait, nerr := nb.NextDue()
				if err == nil {
					err = nerr
				}
				if err != nil {
					if b.once || ctx.Err() != nil {
						return err
					}
					log.Error("etcd backup failed", "err", err)
					wait = min(b.args.Interval, etcdBackupRetry)
				}
				if b.once {
					return nil
				}
				t := time.NewTimer(max(wait, time.Second))
				select {
				case <-ctx.Done():
					t.Stop()
					return nil
				case <-t.C:
				}
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&b.args.Cluster, render.EtcdBackupFlagCluster, "", "the cluster's name, in the file names (required)")
	f.StringVar(&b.args.Endpoint, render.EtcdBackupFlagEndpoint, "", "the local etcd member's client URL (required)")
	f.StringVar(&b.args.CACert, render.EtcdBackupFlagCACert, "", "etcd's CA bundle (required)")
	f.StringVar(&b.args.Cert, render.EtcdBackupFlagCert, "", "etcd client certificate (required)")
	f.StringVar(&b.args.Key, render.EtcdBackupFlagKey, "", "its key (required)")
	f.StringVar(&b.args.Dir, render.EtcdBackupFlagDir, "", "directory the backups are kept in, in "+api.NodeBackupRoot+" (required)")
	f.DurationVar(&b.args.Interval, render.EtcdBackupFlagInterval, 6*time.Hour, "time between two backups")
	f.IntVar(&b.args.Keep, render.EtcdBackupFlagKeep, api.DefaultBackupKeep, "backups kept, newest first")
	f.DurationVar(&b.maxAge, render.EtcdBackupFlagMaxAge, 0, "drop backups older than this (0: keep drops only)")
	f.BoolVar(&b.once, "once", false, "take a backup if one is due, apply the retention, and exit")
	return cmd
}

// backups checks the flags and returns the backup loop they describe.
func (b *etcdBackupFlags) backups() (*etcdsnap.NodeBackups, error) {
	a := b.args
	for name, v := range map[string]string{
		render.EtcdBackupFlagCluster: a.Cluster, render.EtcdBackupFlagEndpoint: a.Endpoint,
		render.EtcdBackupFlagCACert: a.CACert, render.EtcdBackupFlagCert: a.Cert,
		render.EtcdBackupFlagKey: a.Key, render.EtcdBackupFlagDir: a.Dir,
	} {
		if v == "" {
			return nil, fmt.Errorf("--%s is required", name)
		}
	}
	if a.Interval < api.MinBackupInterval || a.Interval > api.MaxBackupInterval {
		return nil, fmt.Errorf("--%s must be between %s and %s", render.EtcdBackupFlagInterval, api.MinBackupInterval, api.MaxBackupInterval)
	}
	if a.Keep < 1 || a.Keep > api.MaxBackupKeep {
		return nil, fmt.Errorf("--%s must be between 1 and %d", render.EtcdBackupFlagKeep, api.MaxBackupKeep)
	}
	if b.maxAge < 0 || b.maxAge > api.MaxBackupMaxAge {
		return nil, fmt.Errorf("--%s must be between 0 and %s", render.EtcdBackupFlagMaxAge, api.MaxBackupMaxAge)
	}
	root, rel, err := splitBackupDir(a.Dir)
	if err != nil {
		return nil, err
	}
	// The root is trusted configuration, created like Debian's when a
	// system lacks it.
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("--%s: %w", render.EtcdBackupFlagDir, err)
	}
	dir, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", render.EtcdBackupFlagDir, err)
	}
	return &etcdsnap.NodeBackups{
		Root: dir, Dir: rel, Cluster: a.Cluster, Interval: a.Interval, Keep: a.Keep, MaxAge: b.maxAge,
		Take: func(ctx context.Context, verifyDir string) (*etcdsnap.Snapshot, error) {
			ca, err := os.ReadFile(a.CACert)
			if err != nil {
				return nil, fmt.Errorf("read etcd CA: %w", err)
			}
			cert, certErr := os.ReadFile(a.Cert)
			key, keyErr := os.ReadFile(a.Key)
			if err := errors.Join(certErr, keyErr); err != nil {
				return nil, fmt.Errorf("read etcd client certificate: %w", err)
			}
			taker := &etcdsnap.Taker{TempDir: verifyDir}
			return taker.TakeURL(ctx, a.Endpoint, ca, pki.KeyPair{CertPEM: cert, KeyPEM: key})
		},
	}, nil
}

// splitBackupDir splits dir, an absolute path inside api.NodeBackupRoot
// (behind the agent's --root when it has one: the render rebases it), at
// the first NodeBackupRoot: what comes before and that directory itself
// are trusted, every name after it is looked up without following a
// symlink. Splitting at the first one errs toward confining more.
func splitBackupDir(dir string) (root, rel string, err error) {
	clean := filepath.Clean(dir)
	i := strings.Index(clean, api.NodeBackupRoot+"/")
	if !filepath.IsAbs(dir) || i < 0 {
		return "", "", fmt.Errorf("--%s %q is not an absolute path in %s", render.EtcdBackupFlagDir, dir, api.NodeBackupRoot)
	}
	return clean[:i+len(api.NodeBackupRoot)], clean[i+len(api.NodeBackupRoot)+1:], nil
}
