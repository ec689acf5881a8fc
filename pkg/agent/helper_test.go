package agent

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/runtime"
)

// The test binary re-executes itself as the supervised process.
const helperEnv = "KCORE_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		<-ch
		os.Exit(0)
	case "hup":
		os.Exit(countHUPs(os.Getenv("KCORE_TEST_HUPFILE")))
	case "oneshot":
		os.Exit(0)
	case "flaky":
		os.Exit(flaky(os.Getenv("KCORE_TEST_CRASHFILE")))
	}
	os.Exit(2)
}

// flaky serves until crashFile appears, then removes it and exits 1: the
// supervisor restarts it and the new process serves on.
func flaky(crashFile string) int {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if os.Remove(crashFile) == nil {
			fmt.Println("crash file found: exiting 1")
			return 1
		}
	}
	return 0
}

// Lines countHUPs appends to its file.
const (
	hupReady = "ready"
	hupLine  = "hup"
)

// countHUPs serves until SIGTERM, appending hupReady to hupFile once it
// handles SIGHUP and hupLine for every SIGHUP, like a daemon that reloads
// its configuration.
func countHUPs(hupFile string) int {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP)
	appendLine := func(line string) bool {
		f, err := os.OpenFile(hupFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return false
		}
		defer f.Close()
		_, err = fmt.Fprintln(f, line)
		return err == nil
	}
	if !appendLine(hupReady) {
		return 3
	}
	for sig := range ch {
		if sig == syscall.SIGTERM {
			return 0
		}
		if !appendLine(hupLine) {
			return 3
		}
	}
	return 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func helperUnit(name, mode, hash string, after ...string) api.Unit {
	exe, _ := filepath.Abs(os.Args[0])
	return api.Unit{Name: name, Argv: []string{exe}, Env: map[string]string{helperEnv: mode}, InputHash: hash, After: after, Oneshot: mode == "oneshot"}
}

func newSupervisor(t *testing.T, root string) *runtime.Supervisor {
	t.Helper()
	s, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root, BackoffInitial: 10 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// stopAll stops every unit of s at the end of a test.
func stopAll(t *testing.T, s *runtime.Supervisor) {
	t.Cleanup(func() {
		ctx := context.Background()
		names, _ := s.List(ctx)
		for _, n := range names {
			s.Stop(ctx, n)
		}
	})
}

func pidOf(t *testing.T, rt runtime.Runtime, name string) int {
	t.Helper()
	st, err := rt.Status(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st.PID
}

func processAlive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == ')' {
			return i+2 < len(data) && data[i+2] != 'Z'
		}
	}
	return false
}
