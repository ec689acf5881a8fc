package runtime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procStat is what the supervisor reads from /proc/<pid>/stat.
type procStat struct {
	State      byte
	PPID       int
	PGID       int
	StartTicks uint64
}

func readProcStat(procDir string, pid int) (procStat, error) {
	data, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	return parseProcStat(data)
}

// parseProcStat parses /proc/<pid>/stat; the command name (field 2) may hold
// spaces and parentheses, so fields are counted after the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse stat: no command field")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); field 22 (starttime) is f[19].
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("parse stat: %d fields", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	ticks, err3 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("parse stat: bad numbers")
	}
	return procStat{State: f[0][0], PPID: ppid, PGID: pgid, StartTicks: ticks}, nil
}

// alive reports whether pid is a live (not zombie) process started at ticks
// (ticks 0 skips the start-time check, which guards against PID reuse).
func alive(procDir string, pid int, ticks uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := readProcStat(procDir, pid)
	if err != nil || st.State == 'Z' || st.State == 'X' {
		return false
	}
	return ticks == 0 || st.StartTicks == ticks
}

// procEnv reads the KCORE_* entries of a process's environment.
func procEnv(procDir string, pid int) map[string]string {
	data, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "environ"))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, kv := range bytes.Split(data, []byte{0}) {
		if !bytes.HasPrefix(kv, []byte("KCORE_")) {
			continue
		}
		k, v, _ := strings.Cut(string(kv), "=")
		out[k] = v
	}
	return out
}

// listPIDs lists the numeric entries of procDir.
func listPIDs(procDir string) []int {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
