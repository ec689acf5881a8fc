package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
)

// Main is the kcore-bench command: it parses args, runs the bench, prints
// the table to stdout and writes the JSON report. It returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kcore-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o Options
	var out, cpuProfile, memProfile, only, clients, fleet, note string
	fs.StringVar(&out, "out", "bench/results.json", "write the JSON report here")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process (its clients and the in-process replicas of figure 2 and of figure 1's split rows) here")
	fs.StringVar(&memProfile, "memprofile", "", "write an allocation profile of the bench process at its end here (go tool pprof -sample_index=alloc_space)")
	fs.StringVar(&o.EtcdBin, "etcd", "", "etcd binary for figure 1's reference (empty: not measured)")
	fs.StringVar(&o.ControllerBin, "controller", "bin/kcore-controller", "kcore-controller binary for figures 1, 3 and 5a")
	fs.StringVar(&o.DataDir, "data-dir", "", "directory for replica and member data (default: a temp dir, removed afterwards)")
	fs.StringVar(&only, "only", "", "comma-separated figure groups to run: "+strings.Join(Groups(), ","))
	fs.StringVar(&clients, "clients", "1,64,256", "figure 1's client counts")
	fs.StringVar(&note, "note", "", "a note for the machine description (e.g. what else ran)")
	fs.IntVar(&o.Runs, "runs", 3, "runs per write configuration")
	fs.DurationVar(&o.WriteDuration, "duration", 0, "length of one write run (default 10s)")
	fs.DurationVar(&o.FleetWindow, "fleet-window", 0, "length of one figure 3 window (default 30s)")
	fs.StringVar(&fleet, "fleet-sizes", "1000,5000", "figure 3's fleet sizes (simulated agents), run smallest first")
	fs.IntVar(&o.FailoverRuns, "failover-runs", 0, "runs of figure 5a (default 5)")
	fs.IntVar(&o.Lab.Runs, "lab-runs", 0, "runs of each lab figure, 5b, 5c, 6 and 7 (default 3)")
	fs.StringVar(&o.Lab.Repo, "repo", ".", "repository root for the lab figures (scripts/lab.sh, examples/lab/cluster.yaml)")
	fs.StringVar(&o.Lab.BinDir, "bin-dir", "bin", "directory with kctl, kcore-controller and kcore-node-agent for the lab figures")
	fs.StringVar(&o.Lab.Cache, "k8s-cache", defaultCache(), "Kubernetes binary cache the lab runs from (its bin/current)")
	fs.StringVar(&o.Lab.Lock, "lab-lock", "/tmp/kcore-lab.lock", "lab lock file taken around the lab figures (empty: the caller holds it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, p := range []*string{&o.Lab.Repo, &o.Lab.BinDir} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
			return 2
		}
		*p = abs
	}
	if only != "" {
		o.Only = strings.Split(only, ",")
	}
	var ok bool
	if o.Clients, ok = positiveList(stderr, "-clients", clients); !ok {
		return 2
	}
	if o.FleetSizes, ok = positiveList(stderr, "-fleet-sizes", fleet); !ok {
		return 2
	}
	o.Progress = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "kcore-bench: start cpu profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := Run(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
		return 1
	}
	if memProfile != "" {
		if err := writeHeapProfile(memProfile); err != nil {
			fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
			return 1
		}
	}
	rep.Machine.Note = note
	if err := rep.PrintTable(stdout); err != nil {
		fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
		return 1
	}
	if out != "" {
		if err := rep.WriteJSON(out); err != nil {
			fmt.Fprintf(stderr, "kcore-bench: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", out)
	}
	return 0
}

// writeHeapProfile writes the process's heap profile, whose alloc_space
// and alloc_objects samples count every allocation since it started.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("write allocation profile: %w", err)
	}
	return f.Close()
}

// positiveList parses a comma-separated list of positive numbers given
// to flag, saying on stderr what is wrong.
func positiveList(stderr io.Writer, flag, list string) ([]int, bool) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "kcore-bench: %s: %q is not a positive number\n", flag, s)
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// defaultCache is $KCORE_CACHE, else ~/.cache/kcore (as scripts/lab.sh).
func defaultCache() string {
	if c := os.Getenv("KCORE_CACHE"); c != "" {
		return c
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ".cache/kcore"
	}
	return filepath.Join(home, ".cache", "kcore")
}
