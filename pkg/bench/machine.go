package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes the machine and its load.
type Machine struct {
	// NProc is the number of CPUs the bench may use.
	NProc int `json:"nproc"`
	// Kernel is the kernel release.
	Kernel string `json:"kernel"`
	// CPU is the CPU model.
	CPU string `json:"cpu"`
	// GoVersion is the toolchain that built the bench.
	GoVersion string `json:"goVersion"`
	// LoadStart and LoadEnd are /proc/loadavg at the start and the end.
	LoadStart string `json:"loadStart"`
	LoadEnd   string `json:"loadEnd"`
	// Note says what else to know (other processes, noise).
	Note string `json:"note,omitempty"`
}

// String is the machine note under the table.
func (m Machine) String() string {
	s := fmt.Sprintf("nproc %d, kernel %s, %s, %s, load average %s at start, %s at end",
		m.NProc, m.Kernel, m.CPU, m.GoVersion, m.LoadStart, m.LoadEnd)
	if m.Note != "" {
		s += "; " + m.Note
	}
	return s
}

// readMachine describes this machine now.
func readMachine() Machine {
	return Machine{
		NProc:     runtime.NumCPU(),
		Kernel:    readTrim("/proc/sys/kernel/osrelease"),
		CPU:       cpuModel(),
		GoVersion: runtime.Version(),
		LoadStart: loadAvg(),
	}
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	f := strings.Fields(readTrim("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
