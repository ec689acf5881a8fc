package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"kcore.dev/kcore/pkg/ctlproc"
	"kcore.dev/kcore/pkg/pki"
)

// etcdCluster is three real etcd members on loopback with TLS for clients
// (client certificates required) and peers, certificates from pkg/pki.
type etcdCluster struct {
	procs   []*exec.Cmd
	dones   []chan struct{}
	clients []string
	tls     *tls.Config
}

func startEtcd(ctx context.Context, bin, root string, auth *ctlproc.Authority) (*etcdCluster, error) {
	caPath := filepath.Join(root, "ca.crt")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	if err := os.WriteFile(caPath, auth.CA().CertPEM, 0o600); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	e := &etcdCluster{}
	var peers, initial []string
	for i := range 3 {
		c, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p, err := freeAddr()
		if err != nil {
			return nil, err
		}
		e.clients = append(e.clients, "https://"+c)
		peers = append(peers, "https://"+p)
		initial = append(initial, fmt.Sprintf("m%d=https://%s", i, p))
	}
	for i := range 3 {
		kp, err := auth.Issue(fmt.Sprintf("etcd-%d", i), "", pki.UsageServer|pki.UsageClient)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(root, fmt.Sprintf("m%d", i))
		if err := ctlproc.WriteFiles(dir, map[string][]byte{"tls.crt": kp.CertPEM, "tls.key": kp.KeyPEM}); err != nil {
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		args := []string{
			"--name", fmt.Sprintf("m%d", i),
			"--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", e.clients[i], "--advertise-client-urls", e.clients[i],
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", "kcore-bench",
			"--cert-file", crt, "--key-file", key, "--trusted-ca-file", caPath, "--client-cert-auth",
			"--peer-cert-file", crt, "--peer-key-file", key, "--peer-trusted-ca-file", caPath, "--peer-client-cert-auth",
			"--log-level", "error",
		}
		logf, err := os.Create(filepath.Join(root, fmt.Sprintf("etcd-%d.log", i)))
		if err != nil {
			e.close()
			return nil, fmt.Errorf("start etcd: %w", err)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			e.close()
			return nil, fmt.Errorf("start etcd member %d: %w", i, err)
		}
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			logf.Close()
			close(done)
		}()
		e.procs = append(e.procs, cmd)
		e.dones = append(e.dones, done)
	}
	ckp, err := auth.Issue("bench-client", "", pki.UsageClient)
	if err != nil {
		e.close()
		return nil, err
	}
	cert, err := tls.X509KeyPair(ckp.CertPEM, ckp.KeyPEM)
	if err != nil {
		e.close()
		return nil, fmt.Errorf("start etcd: client certificate: %w", err)
	}
	e.tls = &tls.Config{RootCAs: auth.CA().Pool(), Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if err := poll(ctx, readyTimeout, func() error {
		_, err := e.leader(ctx)
		return err
	}); err != nil {
		e.close()
		return nil, fmt.Errorf("form etcd cluster: %w (logs in %s)", err, root)
	}
	return e, nil
}

// newClient returns a gRPC client of its own (its own connection) to the
// given endpoints.
func (e *etcdCluster) newClient(endpoints []string) (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints: endpoints, TLS: e.tls.Clone(), DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd: %w", err)
	}
	return c, nil
}

// leader returns the client URL of the member that is leader.
func (e *etcdCluster) leader(ctx context.Context) (string, error) {
	c, err := e.newClient(e.clients)
	if err != nil {
		return "", err
	}
	defer c.Close()
	for _, ep := range e.clients {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := c.Status(sctx, ep)
		cancel()
		if err != nil {
			return "", fmt.Errorf("status of %s: %w", ep, err)
		}
		if st.Leader != 0 && st.Leader == st.Header.MemberId {
			return ep, nil
		}
	}
	return "", errors.New("no etcd leader yet")
}

func (e *etcdCluster) close() {
	for i, p := range e.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.dones[i]:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-e.dones[i]
		}
	}
}
