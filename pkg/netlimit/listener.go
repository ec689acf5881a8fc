package netlimit

import (
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
)

// Limits are a listener's bounds. A zero field means no bound of that kind.
type Limits struct {
	// MaxConns is how many accepted connections may be open at once.
	MaxConns int
	// MaxConnsPerSource is how many of them may come from one source IP.
	MaxConnsPerSource int
}

// Listener is a net.Listener that closes connections past its Limits at
// once instead of handing them to the server.
type Listener struct {
	net.Listener
	lim Limits
	log *slog.Logger

	mu      sync.Mutex
	open    int
	sources map[string]int

	refused atomic.Uint64
}

// Wrap returns l bounded by lim; refused connections are logged at debug
// level to log (nil discards).
func Wrap(l net.Listener, lim Limits, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{Listener: l, lim: lim, log: log, sources: map[string]int{}}
}

// Accept returns the next connection within the limits; connections past
// them are closed and counted (Refused) without returning.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		if l.admit(src) {
			return &conn{Conn: c, l: l, src: src}, nil
		}
		l.refused.Add(1)
		l.log.Debug("connection refused: limit reached", "remote", c.RemoteAddr().String(),
			"max_conns", l.lim.MaxConns, "max_conns_per_source", l.lim.MaxConnsPerSource)
		_ = c.Close()
	}
}

// admit counts a connection from src in when the limits allow it.
func (l *Listener) admit(src string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lim.MaxConns > 0 && l.open >= l.lim.MaxConns {
		return false
	}
	if l.lim.MaxConnsPerSource > 0 && l.sources[src] >= l.lim.MaxConnsPerSource {
		return false
	}
	l.open++
	l.sources[src]++
	return true
}

func (l *Listener) release(src string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.sources[src]--; l.sources[src] <= 0 {
		delete(l.sources, src)
	}
}

// Open returns how many accepted connections are open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Refused returns how many connections were closed for being past the
// limits since the listener was wrapped.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

// sourceOf is the IP a connection comes from (the whole address when it is
// not TCP).
func sourceOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	return a.String()
}

// conn gives its slot back once, when it is closed.
type conn struct {
	net.Conn
	l    *Listener
	src  string
	once sync.Once
}

// Close closes the connection and frees its slot.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.src) })
	return err
}

// NetConn returns the wrapped connection.
func (c *conn) NetConn() net.Conn { return c.Conn }
