package render

import (
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// UnitEtcdBackup takes a control plane's scheduled etcd backups when
// spec.etcdBackup.target is nodes.
const UnitEtcdBackup = "kcore-etcd-backup"

// The node agent's backup command, which UnitEtcdBackup runs, and its flags.
const (
	// AgentBinary is the node agent's binary, found on the node's PATH.
	AgentBinary = "kcore-node-agent"
	// EtcdBackupCommand is the agent's subcommand that takes the backups.
	EtcdBackupCommand      = "etcd-backup"
	EtcdBackupFlagCluster  = "cluster"
	EtcdBackupFlagEndpoint = "endpoint"
	EtcdBackupFlagCACert   = "cacert"
	EtcdBackupFlagCert     = "cert"
	EtcdBackupFlagKey      = "key"
	EtcdBackupFlagDir      = "dir"
	EtcdBackupFlagInterval = "interval"
	EtcdBackupFlagKeep     = "keep"
	EtcdBackupFlagMaxAge   = "max-age"
)

// EtcdBackupArgs are the inputs of the node agent's backup command.
type EtcdBackupArgs struct {
	Cluster, Endpoint, CACert, Cert, Key, Dir string
	Interval                                  time.Duration
	Keep                                      int
	// MaxAge is written as a flag only when set.
	MaxAge time.Duration
}

// Argv is the command line running the backups described by a.
func (a EtcdBackupArgs) Argv() []string {
	flag := func(name, v string) string { return "--" + name + "=" + v }
	argv := []string{
		AgentBinary, EtcdBackupCommand,
		flag(EtcdBackupFlagCluster, a.Cluster),
		flag(EtcdBackupFlagEndpoint, a.Endpoint),
		flag(EtcdBackupFlagCACert, a.CACert),
		flag(EtcdBackupFlagCert, a.Cert),
		flag(EtcdBackupFlagKey, a.Key),
		flag(EtcdBackupFlagDir, a.Dir),
		flag(EtcdBackupFlagInterval, a.Interval.String()),
		flag(EtcdBackupFlagKeep, strconv.Itoa(a.Keep)),
	}
	if a.MaxAge > 0 {
		argv = append(argv, flag(EtcdBackupFlagMaxAge, a.MaxAge.String()))
	}
	return argv
}

// etcdBackup renders, on a control plane of a cluster whose backups are
// kept on the nodes, the unit that snapshots the local etcd member (over
// 127.0.0.1, with kube-apiserver's etcd client certificate) on schedule
// into spec.etcdBackup.nodePath. It reads the certificate files again for
// every snapshot, so a renewal does not restart it; a new etcd CA does.
func (r *renderer) etcdBackup(b *builder) {
	spec := r.c.Spec.EtcdBackup
	if spec == nil || spec.Target != api.BackupTargetNodes {
		return
	}
	a := EtcdBackupArgs{
		Cluster:  r.c.Metadata.Name,
		Endpoint: urlFor("127.0.0.1", r.l.EtcdClientPort),
		CACert:   r.l.PKI("etcd/ca.crt"),
		Cert:     r.l.PKI("apiserver-etcd-client.crt"),
		Key:      r.l.PKI("apiserver-etcd-client.key"),
		Dir:      spec.NodePath,
		Interval: spec.IntervalDuration(),
		Keep:     spec.KeepCount(),
		MaxAge:   spec.MaxAgeDuration(),
	}
	b.unit(api.Unit{
		Name:    r.l.UnitEtcdBackup,
		Reason:  "etcd backups every " + a.Interval.String() + " into " + a.Dir + " (keep " + strconv.Itoa(a.Keep) + ")",
		Argv:    a.Argv(),
		After:   []string{r.l.UnitEtcd},
		Restart: api.RestartAlways,
	}, []string{a.CACert, a.Cert, a.Key})
	b.reloading(a.Cert, a.Key)
}
