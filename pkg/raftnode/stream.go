package raftnode

import (
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// TCPStreamLayer is a raft.StreamLayer over a listener the caller opened,
// so a test can listen on 127.0.0.1:0 and hand the listener over without a
// port race. Outgoing connections are plain TCP; wrap it (or write another
// StreamLayer) for TLS.
type TCPStreamLayer struct {
	net.Listener
	advertise net.Addr
}

// NewTCPStreamLayer returns a stream layer accepting on l and advertising
// advertise to peers; a nil advertise advertises l's own address.
func NewTCPStreamLayer(l net.Listener, advertise net.Addr) *TCPStreamLayer {
	if advertise == nil {
		advertise = l.Addr()
	}
	return &TCPStreamLayer{Listener: l, advertise: advertise}
}

// Addr returns the advertised address, which peers dial.
func (s *TCPStreamLayer) Addr() net.Addr { return s.advertise }

// Dial opens a TCP connection to a peer.
func (s *TCPStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.Dial("tcp", string(address))
	if err != nil {
		return nil, fmt.Errorf("dial raft peer %s: %w", address, err)
	}
	return c, nil
}

// listenTCP opens the default stream layer: a TCP listener on bind that
// advertises advertise (or the listener's address when advertise is empty).
func listenTCP(bind, advertise string) (*TCPStreamLayer, error) {
	l, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, fmt.Errorf("listen raft on %s: %w", bind, err)
	}
	if advertise == "" {
		if a, ok := l.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
			l.Close()
			return nil, fmt.Errorf("raft bind address %s: set an advertise address peers can reach", bind)
		}
		return NewTCPStreamLayer(l, nil), nil
	}
	addr, err := net.ResolveTCPAddr("tcp", advertise)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("resolve raft advertise address %s: %w", advertise, err)
	}
	if addr.IP == nil || addr.IP.IsUnspecified() {
		l.Close()
		return nil, fmt.Errorf("raft advertise address %s: must name a host peers can reach", advertise)
	}
	return NewTCPStreamLayer(l, addr), nil
}
