package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fsyncAppend is the size of one append, about one raft entry of a 1 KiB
// write with its audit entry and framing.
const fsyncAppend = 2300

// measureFsync appends n blocks of fsyncAppend bytes to a file in dir,
// fdatasync after each, and returns each append's latency.
func measureFsync(dir string, n int) ([]time.Duration, error) {
	path := filepath.Join(dir, "fsync.probe")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("measure fsync: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, fsyncAppend)
	for i := range buf {
		buf[i] = byte('a' + i%26)
	}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("measure fsync: %w", err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return nil, fmt.Errorf("measure fsync: fdatasync: %w", err)
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// measureRTT ping-pongs one byte n times over a loopback TCP connection
// and returns each round trip.
func measureRTT(ctx context.Context, n int) ([]time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("measure rtt: %w", err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(c, c)
		done <- err
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("measure rtt: %w", err)
	}
	out := make([]time.Duration, 0, n)
	b := []byte{1}
	for range n {
		start := time.Now()
		if _, err := c.Write(b); err != nil {
			c.Close()
			return nil, fmt.Errorf("measure rtt: %w", err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			c.Close()
			return nil, fmt.Errorf("measure rtt: %w", err)
		}
		out = append(out, time.Since(start))
	}
	c.Close()
	<-done
	return out, nil
}

// floorFigures measures the physical floor: fsync and loopback RTT p50 and
// p99, each over runs runs.
func floorFigures(ctx context.Context, dir string, runs int) ([]Figure, error) {
	var f50, f99, r50, r99 []float64
	for range runs {
		fs, err := measureFsync(dir, 300)
		if err != nil {
			return nil, err
		}
		l := LatenciesOf(fs)
		f50, f99 = append(f50, l.P50), append(f99, l.P99)
		rt, err := measureRTT(ctx, 5000)
		if err != nil {
			return nil, err
		}
		l = LatenciesOf(rt)
		r50, r99 = append(r50, l.P50), append(r99, l.P99)
	}
	note := fmt.Sprintf("300 appends of %d bytes + fdatasync per run, in the bench data dir", fsyncAppend)
	return []Figure{
		measured("0a", "floor: fsync p50", "ms", f50).withNote(note),
		measured("0a", "floor: fsync p99", "ms", f99).withNote(note),
		measured("0b", "floor: loopback TCP RTT p50", "ms", r50).withNote("5000 one-byte ping-pongs per run"),
		measured("0b", "floor: loopback TCP RTT p99", "ms", r99).withNote("5000 one-byte ping-pongs per run"),
	}, nil
}
