package runtime

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executes itself as the supervised process: with
// KCORE_TEST_HELPER set, TestMain runs the named helper instead of tests.
const helperEnv = "KCORE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

func runHelper(mode string) int {
	switch mode {
	case "serve":
		return serve()
	case "crash":
		return 3
	case "oneshot":
		f, err := os.OpenFile(os.Getenv("KCORE_TEST_COUNT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return 1
		}
		f.WriteString("ran\n")
		f.Close()
		return 0
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		os.WriteFile(os.Getenv("KCORE_TEST_PIDFILE"), []byte("ready"), 0o644)
		select {}
	case "group":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=serve")
		if err := child.Start(); err != nil {
			return 1
		}
		os.WriteFile(os.Getenv("KCORE_TEST_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		return serve()
	}
	return 2
}

func serve() int {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	os.Stdout.WriteString("serving\n")
	<-ch
	return 0
}

// waitFor polls cond until it holds or a deadline passes.
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

// helperArgv is the argv that re-executes the test binary.
func helperArgv(t *testing.T) []string {
	t.Helper()
	exe, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
