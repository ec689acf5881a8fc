package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/gitops"
	"kcore.dev/kcore/pkg/orchestrator"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
)

// LogStarted is the message a replica logs (at info, with its id and its
// bound "api" and "raft" addresses) once it listens; tools that start a
// replica on port 0 read the addresses from it.
const LogStarted = "controller replica started"

// GitOpsCacheDir is the directory under the data dir where the leader
// keeps the repositories of the GitSources it follows.
const GitOpsCacheDir = "gitops"

// Controller is one running replica.
type Controller struct {
	cfg      Config
	log      *slog.Logger
	node     *raftnode.Node
	srv      *server.Server
	http     *http.Server
	httpLn   net.Listener
	httpAddr string
	clientTL *tls.Config
	keyring  *secrets.Keyring
	own      *ownCert

	stop     chan struct{}
	wg       sync.WaitGroup
	errCh    chan error
	stopOnce sync.Once

	// joined is closed once this replica is a member: at once unless it
	// joins (--join), else when the join succeeded.
	joined chan struct{}
}

// credentials are a replica's loaded PKI files.
type credentials struct {
	ca      *pki.CA
	cert    tls.Certificate
	own     pki.KeyPair
	keyring *secrets.Keyring
}

func loadCredentials(cfg Config) (credentials, error) {
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(cfg.PKIDir, name))
		if err != nil {
			return nil, fmt.Errorf("load pki: %w (create it with `kctl controller init`)", err)
		}
		return b, nil
	}
	var kp, ckp pki.KeyPair
	var err error
	if kp.CertPEM, err = read(FileCACert); err != nil {
		return credentials{}, err
	}
	if kp.KeyPEM, err = read(FileCAKey); err != nil {
		return credentials{}, err
	}
	if ckp.CertPEM, err = read(FileServerCert); err != nil {
		return credentials{}, err
	}
	if ckp.KeyPEM, err = read(FileServerKey); err != nil {
		return credentials{}, err
	}
	ca, err := pki.LoadCA(kp)
	if err != nil {
		return credentials{}, fmt.Errorf("load pki: %w", err)
	}
	cert, err := tls.X509KeyPair(ckp.CertPEM, ckp.KeyPEM)
	if err != nil {
		return credentials{}, fmt.Errorf("load pki: server certificate: %w", err)
	}
	keyring, err := secrets.LoadFile(cfg.EncryptionKeyFile)
	if err != nil {
		return credentials{}, fmt.Errorf("load pki: %w", err)
	}
	return credentials{ca: ca, cert: cert, own: ckp, keyring: keyring}, nil
}

// Start opens the replica: PKI, listeners, raft, the API server, and the
// bootstrap or join. It returns once the API is serving; joining goes on in
// the background and its failure is reported by Wait.
func Start(ctx context.Context, cfg Config) (*Controller, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	creds, err := loadCredentials(cfg)
	if err != nil {
		return nil, err
	}
	c := &Controller{cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), joined: make(chan struct{}), errCh: make(chan error, 2)}
	if err := c.open(creds); err != nil {
		c.closeAll()
		return nil, err
	}
	c.wg.Add(5)
	go func() {
		defer c.wg.Done()
		c.own.run(c.stop, cfg.CertCheckInterval, cfg.now)
	}()
	go c.serve()
	go c.recordSelfWhenLeader()
	go c.recordSelfWhenFollower()
	go c.summarise()
	if cfg.SnapshotCopyInterval > 0 {
		c.wg.Add(1)
		go c.copySnapshots()
	}
	if !cfg.NoOrchestrator {
		c.wg.Add(2)
		go c.orchestrate()
		go c.followGit()
	}
	if len(cfg.Join) > 0 {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.join(ctx); err != nil {
				c.errCh <- err
				return
			}
			close(c.joined)
		}()
	} else {
		close(c.joined)
	}
	return c, nil
}

func (c *Controller) open(creds credentials) error {
	cfg := c.cfg
	var err error
	c.httpLn, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen api on %s: %w", cfg.Listen, err)
	}
	if c.httpAddr, err = advertised(cfg.Advertise, c.httpLn.Addr(), "--advertise"); err != nil {
		return err
	}
	raftLn, err := net.Listen("tcp", cfg.RaftListen)
	if err != nil {
		return fmt.Errorf("listen raft on %s: %w", cfg.RaftListen, err)
	}
	raftAdv := cfg.RaftAdvertise
	if raftAdv == "" {
		raftAdv, err = withPort(c.httpAddr, raftLn.Addr().(*net.TCPAddr).Port)
		if err != nil {
			raftLn.Close()
			return err
		}
	}
	advAddr, err := net.ResolveTCPAddr("tcp", raftAdv)
	if err != nil {
		raftLn.Close()
		return fmt.Errorf("resolve raft advertise address %s: %w", raftAdv, err)
	}
	id := cfg.ID
	if id == "" {
		id = c.httpAddr
	}
	pool := creds.ca.Pool()
	c.own, err = newOwnCert(cfg.PKIDir, creds.ca, creds.own.CertPEM, creds.own.KeyPEM, cfg.Lifetime, c.log.With("component", "own-cert"))
	if err != nil {
		raftLn.Close()
		return err
	}
	// A replica that was off past its certificate's renewal (or expiry)
	// renews before its first handshake, raft's included.
	c.own.check(cfg.now())
	stream := NewTLSStreamLayer(raftLn, advAddr, creds.cert, pool, cfg.RaftLimits, c.log.With("component", "raft-transport"))
	c.own.serverTLS(stream.server)
	c.own.clientTLS(stream.client)
	c.node, err = raftnode.Open(raftnode.Config{
		ID:           id,
		DataDir:      cfg.DataDir,
		LogStore:     cfg.LogStore,
		Bootstrap:    cfg.Bootstrap,
		Logger:       c.log,
		RaftLogLevel: slog.LevelWarn,
		FastTimeouts: cfg.FastTimeouts,
		StreamLayer:  stream,
	})
	if err != nil {
		raftLn.Close()
		return err
	}
	c.clientTL = c.own.clientTLS(server.ClientTLS(creds.cert, pool))
	c.keyring = creds.keyring
	c.srv, err = server.New(server.Config{
		Backend:    &Backend{n: c.node, Render: cfg.RenderOptions},
		CA:         creds.ca,
		Keyring:    creds.keyring,
		ForwardTLS: c.clientTL,
		Logger:     c.log.With("component", "api"),
		Now:        cfg.Now,
		Limits:     cfg.APILimits,

		Anonymous:      cfg.Anonymous,
		AuditRetention: cfg.AuditRetention,

		NodeCertValidity: cfg.NodeCertValidity,
		NodeCertGrace:    cfg.NodeCertGrace,

		EtcdSnapshots: c.snapshotFiles(),
	})
	if err != nil {
		return err
	}
	c.http = c.srv.HTTPServer(c.own.serverTLS(c.srv.ServerTLS(creds.cert, pool)))
	warnFDLimit(c.log, c.srv.Limits(), cfg.RaftLimits.withDefaults())
	c.log.Info(LogStarted, "id", id, "api", c.httpAddr, "raft", c.node.Addr(),
		"bootstrap", cfg.Bootstrap, "join", cfg.Join)
	return nil
}

func (c *Controller) serve() {
	defer c.wg.Done()
	if err := c.http.ServeTLS(c.srv.Listener(c.httpLn), "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		c.errCh <- fmt.Errorf("serve api: %w", err)
	}
}

// recordSelfWhenLeader writes this replica's Member object each time it
// becomes leader, so followers know where to forward.
func (c *Controller) recordSelfWhenLeader() {
	defer c.wg.Done()
	ch := c.node.LeaderCh()
	for {
		select {
		case <-c.stop:
			return
		case leader, ok := <-ch:
			if !ok {
				return
			}
			if !leader {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if _, err := c.srv.RecordMember(ctx, c.node.ID(), c.node.Addr(), c.httpAddr, c.cfg.schema()); err != nil {
				c.log.Warn("record this replica as a member", "err", err)
			}
			cancel()
		}
	}
}

// summarise runs the API's summaries of anonymous failures until Close.
func (c *Controller) summarise() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.stop
		cancel()
	}()
	c.srv.Run(ctx)
}

// orchestrate runs the orchestrator while this replica is leader.
func (c *Controller) orchestrate() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.stop
		cancel()
	}()
	orchestrator.RunOnLeader(ctx, c.node.LeaderCh(), orchestrator.Config{
		Node:           c.node,
		Keyring:        c.keyring,
		Now:            c.cfg.Now,
		HealthInterval: c.cfg.HealthInterval,
		AddonGrace:     c.cfg.AddonGrace,
		DeleteTimeout:  c.cfg.DeleteTimeout,
		RenderOptions:  c.cfg.RenderOptions,
		Lifetime:       c.cfg.Lifetime,
		LastSeen:       c.srv.LastSeen,
		Logger:         c.log,
		Checker:        c.cfg.HealthChecker,
		Kube:           c.cfg.KubeDialer,
		Backups:        c.snapshotFiles(),
		ReplicaID:      c.node.ID(),
		FetchSnapshot:  c.srv.FetchEtcdSnapshot,

		BackupCheckInterval: c.cfg.BackupCheckInterval,
	})
}

// snapshotFiles are this replica's etcd snapshot files, in its data dir.
func (c *Controller) snapshotFiles() *etcdsnap.Files {
	return &etcdsnap.Files{Dir: filepath.Join(c.cfg.DataDir, etcdsnap.DirName), Sealer: c.keyring}
}

// followGit follows the GitSources while this replica is leader, caching
// their repositories under the data dir.
func (c *Controller) followGit() {
	defer c.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-c.stop
		cancel()
	}()
	gitops.RunOnLeader(ctx, c.node.LeaderCh(), gitops.Config{
		State:   c.node.State(),
		Planner: c.srv,
		Fetcher: &gitops.GitFetcher{Dir: filepath.Join(c.cfg.DataDir, GitOpsCacheDir)},
		Logger:  c.log,
		Now:     c.cfg.Now,
	})
}

// HTTPAddr is the advertised API address.
func (c *Controller) HTTPAddr() string { return c.httpAddr }

// RaftAddr is the advertised raft address.
func (c *Controller) RaftAddr() string { return c.node.Addr() }

// Node is the replica's raft node.
func (c *Controller) Node() *raftnode.Node { return c.node }

// Server is the replica's API server.
func (c *Controller) Server() *server.Server { return c.srv }

// Wait blocks until ctx ends (nil) or the replica fails (its error).
func (c *Controller) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.errCh:
		return err
	}
}

// Close stops the API and raft. It is safe to call more than once.
func (c *Controller) Close() error {
	var err error
	c.stopOnce.Do(func() {
		close(c.stop)
		err = c.closeAll()
		c.wg.Wait()
	})
	return err
}

func (c *Controller) closeAll() error {
	var errs []error
	if c.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := c.http.Shutdown(ctx); err != nil {
			errs = append(errs, c.http.Close())
		}
		cancel()
	} else if c.httpLn != nil {
		c.httpLn.Close()
	}
	if c.node != nil {
		errs = append(errs, c.node.Shutdown())
	}
	return errors.Join(errs...)
}

// Run starts a replica and serves until ctx ends or it fails.
func Run(ctx context.Context, cfg Config) error {
	c, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	werr := c.Wait(ctx)
	c.log.Info("controller replica stopping", "id", c.node.ID())
	return errors.Join(werr, c.Close())
}
