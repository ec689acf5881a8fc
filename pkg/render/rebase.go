package render

import (
	"regexp"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// HostDirs are the directories rendered paths live in. Rebase moves paths
// under them to another root.
func HostDirs() []string {
	return []string{
		"/etc/cni",
		"/etc/containerd",
		"/etc/keepalived",
		"/etc/kubernetes",
		"/etc/nftables.d",
		"/run/containerd",
		DefaultRunDir,
		DefaultEtcdDataDir,
		"/var/lib/cni",
		"/var/lib/containerd",
		"/var/lib/kube-proxy",
		"/var/lib/kubelet",
		PodLogsDir,
		api.NodeBackupRoot,
		CiliumChartDir,
	}
}

// Rebase returns a copy of ns in which every path under HostDirs that appears
// in a unit's or task's argv, a unit's environment or CRI endpoint, or a file's content is
// prefixed with root, so processes started by an agent running with --root
// (labs, tests: several nodes on one machine) read and write that root's
// files. File paths and volumes are left as they are: the agent resolves them
// under its root itself. Input hashes are kept: they describe the rendered
// inputs, and rebasing is deterministic. Binaries (argv[0], /usr/bin/curl)
// are not moved. Rebase(ns, "") and Rebase(ns, "/") return an equal copy.
func Rebase(ns *api.NodeState, root string) *api.NodeState {
	root = strings.TrimRight(root, "/")
	out := *ns
	out.Files = append([]api.File(nil), ns.Files...)
	out.Units = append([]api.Unit(nil), ns.Units...)
	out.Tasks = append([]api.Task(nil), ns.Tasks...)
	out.Volumes = append([]api.VolumeOp(nil), ns.Volumes...)
	if root == "" {
		return &out
	}
	re := hostPathPattern()
	move := func(s string) string { return re.ReplaceAllString(s, "${1}"+root+"${2}") }
	moveAll := func(argv []string) []string {
		res := make([]string, len(argv))
		for i, a := range argv {
			res[i] = a
			if i > 0 {
				res[i] = move(a)
			}
		}
		return res
	}
	for i := range out.Files {
		if out.Files[i].Encoding != "" {
			// Encoded binary content holds no paths to move.
			continue
		}
		out.Files[i].Content = move(out.Files[i].Content)
	}
	for i := range out.Units {
		u := &out.Units[i]
		u.Argv = moveAll(u.Argv)
		u.CRIEndpoint = move(u.CRIEndpoint)
		if u.Env != nil {
			env := make(map[string]string, len(u.Env))
			for k, v := range u.Env {
				env[k] = move(v)
			}
			u.Env = env
		}
	}
	for i := range out.Tasks {
		out.Tasks[i].Argv = moveAll(out.Tasks[i].Argv)
	}
	return &out
}

// hostPathPattern matches a HostDirs entry that starts a path: preceded by
// the start, a character that cannot be part of a path or unix:// (socket
// endpoints), and ending at a path separator or the end of the word.
func hostPathPattern() *regexp.Regexp {
	dirs := HostDirs()
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		quoted[i] = regexp.QuoteMeta(d)
	}
	return regexp.MustCompile(`(^|[^A-Za-z0-9._/-]|unix://)((?:` + strings.Join(quoted, "|") + `)\b)`)
}
