// Command echo is the kcore lab's test workload (image docker.io/kcore/echo,
// pinned in manifests/images.go): an HTTP server that answers GET / with the
// host name it runs on (a pod's name) and the address the request came from,
// and GET /healthz with ok, so a probe, a Service and a curl can each tell
// which pod answered. As a client it checks what a pod can reach: GET a URL
// and expect a substring, resolve a name (Go's own resolver: the image needs
// no libc).
//
//	echo [-listen :8080]
//	echo -get http://HOST:PORT/PATH=SUBSTRING ... -lookup NAME ...
//	echo -version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// version is what echo -version prints.
const version = "kcore-echo v2"

// Server bounds.
const (
	readHeaderTimeout = 5 * time.Second
	shutdownTimeout   = 5 * time.Second
	maxHeaderBytes    = 16 << 10
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(os.Args[1:], os.Stdout, log); err != nil {
		log.Error("echo failed", "err", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer, log *slog.Logger) error {
	fl := flag.NewFlagSet("echo", flag.ContinueOnError)
	listen := fl.String("listen", ":8080", "address to serve HTTP on")
	showVersion := fl.Bool("version", false, "print the version and exit")
	var checks []check
	fl.Func("get", "as a client: GET `URL=SUBSTRING` and expect SUBSTRING in the body (repeatable)", func(v string) error {
		c, err := parseGet(v)
		checks = append(checks, c)
		return err
	})
	fl.Func("lookup", "as a client: resolve `NAME` (repeatable)", func(v string) error {
		checks = append(checks, check{lookup: v})
		return nil
	})
	if err := fl.Parse(args); err != nil {
		return fmt.Errorf("parse flags: %w", err)
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, version)
		return err
	}
	if len(checks) > 0 {
		return runChecks(context.Background(), checks, stdout)
	}
	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("read hostname: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: handler(host), ReadHeaderTimeout: readHeaderTimeout, MaxHeaderBytes: maxHeaderBytes}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("echo serving", "addr", ln.Addr().String(), "hostname", host)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// handler answers / with the host name and the caller, /healthz with ok.
func handler(host string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hostname: %s\nremote: %s\n", host, r.RemoteAddr)
	})
	return mux
}
