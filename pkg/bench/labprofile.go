package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// readySteps are the agent events figure 6 splits the apply at.
func readySteps() []readyStep {
	return []readyStep{
		{"unit kcore-kube-scheduler", "kube-scheduler started on every node"},
		{"task kcore-kubernetes-addons", "add-ons task started (the apply's last item)"},
		{proxySettle, "split: kube-proxy started → the agent's next item"},
	}
}

// proxySettle names, in profileRun's result, the longest wait on any node
// between starting kube-proxy and the agent's next unit or task.
const proxySettle = "kube-proxy settle"

// nextEvent is the earliest event after at.
func nextEvent(evs map[string]time.Duration, at time.Duration) (time.Duration, bool) {
	var next time.Duration
	found := false
	for _, d := range evs {
		if d > at && (!found || d < next) {
			next, found = d, true
		}
	}
	return next, found
}

// readyStep is one agent event and what it means.
type readyStep struct{ event, what string }

// agentEvents reads an agent log and returns, for each unit start
// ("unit NAME") and task run ("task NAME") logged at or after since, the
// time from since to its first occurrence.
func agentEvents(path string, since time.Time) (map[string]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read agent log: %w", err)
	}
	defer f.Close()
	out := map[string]time.Duration{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		ev, at, ok := parseAgentEvent(sc.Text())
		if !ok || at.Before(since) {
			continue
		}
		if _, seen := out[ev]; !seen {
			out[ev] = at.Sub(since)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read agent log: %w", err)
	}
	return out, nil
}

// parseAgentEvent picks a unit start or task run out of one slog text line.
func parseAgentEvent(line string) (string, time.Time, bool) {
	var ev string
	switch logField(line, "msg") {
	case "start unit":
		ev = "unit " + logField(line, "unit")
	case "run task":
		ev = "task " + logField(line, "task")
	default:
		return "", time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, logField(line, "time"))
	if err != nil {
		return "", time.Time{}, false
	}
	return ev, at, true
}

// logField is the value of key in a slog text line ("" when absent).
func logField(line, key string) string {
	rest, ok := strings.CutPrefix(line, key+"=")
	if !ok {
		i := strings.Index(line, " "+key+"=")
		if i < 0 {
			return ""
		}
		rest = line[i+len(key)+2:]
	}
	if v, quoted := strings.CutPrefix(rest, `"`); quoted {
		v, _, _ = strings.Cut(v, `"`)
		return v
	}
	v, _, _ := strings.Cut(rest, " ")
	return v
}

// profileRun reads every node's agent log for one apply started at start
// and returns, per event, the latest node's time; it reports the per-node
// timeline through progress.
func (r *readyBench) profileRun(start time.Time) map[string]time.Duration {
	l := r.l
	latest := map[string]time.Duration{}
	for _, n := range labNodes() {
		evs, err := agentEvents(filepath.Join(l.dir, "log", "agent-"+n.name+".log"), start)
		if err != nil {
			l.progress(fmt.Sprintf("profile of %s: %v", n.name, err))
			continue
		}
		var line []string
		for _, ev := range sortedByValue(evs) {
			line = append(line, fmt.Sprintf("%s %.2fs", ev, evs[ev].Seconds()))
			latest[ev] = max(latest[ev], evs[ev])
		}
		if proxy, ok := evs["unit kcore-kube-proxy"]; ok {
			if next, ok := nextEvent(evs, proxy); ok {
				latest[proxySettle] = max(latest[proxySettle], next-proxy)
			}
		}
		l.progress(fmt.Sprintf("  agent %s: %s", n.name, strings.Join(line, ", ")))
	}
	return latest
}

// sortedByValue is m's keys, earliest first.
func sortedByValue(m map[string]time.Duration) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(m[a], m[b]) })
	return keys
}
