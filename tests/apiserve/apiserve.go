// Package apiserve runs the controller's HTTPS API on replicas of the
// in-process harness, for tests that talk to real servers (tests/apply,
// tests/security). It is separate from tests/harness because it imports
// pkg/controller, whose orchestrator's own tests use the harness.
package apiserve

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"

	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/tests/harness"
)

// API is one replica's API server, kept in harness.Replica.Extra.
type API struct {
	Server *server.Server
	HTTP   *http.Server
	Addr   string
	// stop ends the server's summary loop.
	stop context.CancelFunc
}

// Start serves r's API over mutual TLS on 127.0.0.1 with cfg (its Backend is
// set to r's node) and cert from ca, within cfg.Limits as kcore-controller
// serves it. A restarted replica gets the address it
// had before, so clients that know it still reach it.
func Start(r *harness.Replica, cfg server.Config, cert tls.Certificate, ca *pki.CA) error {
	cfg.Backend = controller.NewBackend(r.Node())
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	addr := "127.0.0.1:0"
	if prev, ok := r.Extra.(*API); ok {
		addr = prev.Addr
	}
	var ln net.Listener
	if err := harness.Poll(harness.DefaultTimeout, func() error {
		ln, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		return err
	}
	hs := srv.HTTPServer(srv.ServerTLS(cert, ca.Pool()))
	go func() { _ = hs.ServeTLS(srv.Listener(ln), "", "") }()
	ctx, stop := context.WithCancel(context.Background())
	go srv.Run(ctx)
	r.Extra = &API{Server: srv, HTTP: hs, Addr: ln.Addr().String(), stop: stop}
	return nil
}

// Stop closes r's API server, if it runs one.
func Stop(r *harness.Replica) {
	if a, ok := r.Extra.(*API); ok {
		a.stop()
		_ = a.HTTP.Close()
	}
}

// Of returns r's API server.
func Of(r *harness.Replica) *API { return r.Extra.(*API) }
