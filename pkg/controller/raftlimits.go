package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"kcore.dev/kcore/pkg/netlimit"
)

// Defaults of RaftLimits.
const (
	// DefaultRaftHandshakeTimeout bounds a raft connection's TLS handshake,
	// counted from accept.
	DefaultRaftHandshakeTimeout = 10 * time.Second
	// DefaultRaftIdleTimeout bounds how long a raft connection may stay
	// silent after its handshake before it carries its first RPC.
	DefaultRaftIdleTimeout = 30 * time.Second
	// DefaultRaftMaxConns bounds the inbound raft connections held at once.
	DefaultRaftMaxConns = 256
	// DefaultRaftMaxConnsPerSource bounds the inbound raft connections held
	// from one source IP. A peer holds a handful (heartbeats, the
	// replication pipeline and a small pool).
	DefaultRaftMaxConnsPerSource = 32
)

// RaftLimits bound the raft port's inbound connections. Zero fields take
// the Default values.
type RaftLimits struct {
	// HandshakeTimeout bounds the TLS handshake.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that carries no RPC this long after
	// its handshake. A connection that has carried one is kept however long
	// it then idles: raft pools its outgoing connections, and closing a
	// pooled one would fail the next vote sent over it.
	IdleTimeout time.Duration
	// MaxConns and MaxConnsPerSource bound the connections held at once, in
	// total and per source IP; past them a new connection is closed as
	// soon as it is accepted.
	MaxConns          int
	MaxConnsPerSource int
}

func (l RaftLimits) withDefaults() RaftLimits {
	if l.HandshakeTimeout <= 0 {
		l.HandshakeTimeout = DefaultRaftHandshakeTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultRaftIdleTimeout
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultRaftMaxConns
	}
	if l.MaxConnsPerSource <= 0 {
		l.MaxConnsPerSource = DefaultRaftMaxConnsPerSource
	}
	return l
}

func (l RaftLimits) listener(ln net.Listener, log *slog.Logger) *netlimit.Listener {
	return netlimit.Wrap(ln, netlimit.Limits{MaxConns: l.MaxConns, MaxConnsPerSource: l.MaxConnsPerSource}, log)
}

// guardedConn is an accepted raft connection that completes its handshake
// within HandshakeTimeout and starts its first RPC within IdleTimeout. The
// transport reads and answers a connection from one goroutine, so the
// state needs no lock.
type guardedConn struct {
	*tls.Conn
	lim    RaftLimits
	log    *slog.Logger
	shaken bool
	active bool
}

// Read handshakes on first use and arms the first-RPC deadline. A
// connection cut by a deadline or a failed handshake reads as EOF, so the
// transport closes it quietly: the refusal is logged here, once.
func (c *guardedConn) Read(p []byte) (int, error) {
	if !c.shaken {
		if err := c.handshake(); err != nil {
			return 0, err
		}
	}
	n, err := c.Conn.Read(p)
	if n > 0 && !c.active {
		c.active = true
		if derr := c.Conn.SetReadDeadline(time.Time{}); derr != nil {
			return n, derr
		}
	}
	if err != nil && !c.active && errors.Is(err, os.ErrDeadlineExceeded) {
		c.log.Debug("raft connection closed: no RPC after the handshake",
			"remote", c.RemoteAddr().String(), "idle_timeout", c.lim.IdleTimeout)
		return n, io.EOF
	}
	return n, err
}

func (c *guardedConn) handshake() error {
	if err := c.Conn.SetDeadline(time.Now().Add(c.lim.HandshakeTimeout)); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.lim.HandshakeTimeout)
	defer cancel()
	if err := c.Conn.HandshakeContext(ctx); err != nil {
		c.log.Debug("raft connection closed: handshake failed", "remote", c.RemoteAddr().String(),
			"handshake_timeout", c.lim.HandshakeTimeout, "err", err)
		return io.EOF
	}
	c.shaken = true
	if err := c.Conn.SetDeadline(time.Time{}); err != nil {
		return err
	}
	return c.Conn.SetReadDeadline(time.Now().Add(c.lim.IdleTimeout))
}

// Write handshakes first too, in case the transport writes before it reads.
func (c *guardedConn) Write(p []byte) (int, error) {
	if !c.shaken {
		if err := c.handshake(); err != nil {
			return 0, err
		}
	}
	return c.Conn.Write(p)
}
