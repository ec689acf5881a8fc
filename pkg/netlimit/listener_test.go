package netlimit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// serve accepts on l until it closes, holding every accepted connection
// open (the test closes the listener's connections at cleanup).
func serve(t *testing.T, l *Listener) {
	t.Helper()
	held := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range held {
			c.Close()
		}
	})
}

// dialFrom connects to addr from source IP src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer reports whether the server closed c: a read returns EOF
// or a reset rather than timing out.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// poll waits for cond with a generous deadline.
func poll(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		<-time.After(5 * time.Millisecond)
	}
}

func TestLimitsAtTheBound(t *testing.T) {
	tests := []struct {
		name    string
		lim     Limits
		sources []string
		per     int // connections per source
		held    int // connections the listener keeps
	}{
		{"total", Limits{MaxConns: 6}, []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}, 3, 6},
		{"per source", Limits{MaxConns: 100, MaxConnsPerSource: 2}, []string{"127.0.0.1", "127.0.0.2"}, 4, 4},
		{"both", Limits{MaxConns: 5, MaxConnsPerSource: 2}, []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}, 3, 5},
		{"none", Limits{}, []string{"127.0.0.1"}, 8, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			l := Wrap(ln, tt.lim, nil)
			serve(t, l)
			var conns []net.Conn
			for _, src := range tt.sources {
				for range tt.per {
					conns = append(conns, dialFrom(t, src, ln.Addr().String()))
				}
			}
			total := len(conns)
			poll(t, func() error {
				if got := int(l.Refused()); got != total-tt.held {
					return fmt.Errorf("refused %d, want %d", got, total-tt.held)
				}
				if got := l.Open(); got != tt.held {
					return fmt.Errorf("open %d, want %d", got, tt.held)
				}
				return nil
			})
			results := make(chan bool, len(conns))
			for _, c := range conns {
				go func() { results <- closedByServer(c) }()
			}
			closed := 0
			for range conns {
				if <-results {
					closed++
				}
			}
			if closed != total-tt.held {
				t.Fatalf("%d connections closed by the listener, want %d", closed, total-tt.held)
			}
		})
	}
}

func TestClosingFreesTheSlot(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, Limits{MaxConns: 1}, nil)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			// Echo one byte, then hang up: the slot is free again.
			b := make([]byte, 1)
			if _, err := io.ReadFull(c, b); err == nil {
				_, _ = c.Write(b)
			}
			c.Close()
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	for i := range 3 {
		c := dialFrom(t, "127.0.0.1", ln.Addr().String())
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := io.ReadFull(c, b); err != nil || b[0] != byte(i) {
			t.Fatalf("connection %d: got %v, %v", i, b, err)
		}
		c.Close()
		poll(t, func() error {
			if n := l.Open(); n != 0 {
				return fmt.Errorf("%d open", n)
			}
			return nil
		})
	}
	if l.Refused() != 0 {
		t.Fatalf("refused %d", l.Refused())
	}
}
