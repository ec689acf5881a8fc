package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"kcore.dev/kcore/pkg/api"
)

// builder collects one node's state; finish sorts it and computes the input
// hashes once every file is known.
type builder struct {
	cluster, node string
	layout        Layout
	files         map[string]api.File
	units         []pendingUnit
	tasks         []pendingTask
	volumes       []api.VolumeOp
}

// pendingUnit is a unit and the files and extra strings its hash covers.
// hashArgv, when set, replaces argv in the hash (flags the process reads only
// on its first start are left out).
type pendingUnit struct {
	unit     api.Unit
	reads    []string
	extra    []string
	hashArgv []string
}

type pendingTask struct {
	task  api.Task
	reads []string
}

func newBuilder(l Layout, node string) *builder {
	return &builder{cluster: l.Cluster, node: node, layout: l, files: map[string]api.File{}}
}

// file adds a file; keys and kubeconfigs are secret. reason says what the
// file is, for plans.
func (b *builder) file(path string, mode uint32, content string, secret bool, reason string) {
	b.files[path] = api.File{Path: path, Mode: mode, Content: content, Secret: secret, Reason: reason}
}

func (b *builder) unit(u api.Unit, reads []string, extra ...string) {
	b.units = append(b.units, pendingUnit{unit: u, reads: reads, extra: extra})
}

func (b *builder) task(t api.Task, reads ...string) {
	b.tasks = append(b.tasks, pendingTask{task: t, reads: reads})
}

func (b *builder) finish() (*api.NodeState, error) {
	ns := &api.NodeState{Cluster: b.cluster, NodeID: b.node}
	for _, f := range b.files {
		ns.Files = append(ns.Files, f)
	}
	sort.Slice(ns.Files, func(i, j int) bool { return ns.Files[i].Path < ns.Files[j].Path })
	for _, p := range b.units {
		argv := p.unit.Argv
		if p.hashArgv != nil {
			argv = p.hashArgv
		}
		h, err := b.inputHash(argv, p.unit.Env, p.reads, append([]string{p.unit.Restart, fmt.Sprint(p.unit.Oneshot)}, p.extra...))
		if err != nil {
			return nil, fmt.Errorf("render unit %s: %w", p.unit.Name, err)
		}
		u := p.unit
		u.InputHash = h
		u.Inputs = sortedCopy(p.reads)
		ns.Units = append(ns.Units, u)
	}
	sort.Slice(ns.Units, func(i, j int) bool { return ns.Units[i].Name < ns.Units[j].Name })
	for _, p := range b.tasks {
		h, err := b.inputHash(p.task.Argv, nil, p.reads, nil)
		if err != nil {
			return nil, fmt.Errorf("render task %s: %w", p.task.Name, err)
		}
		t := p.task
		t.InputHash = h
		t.Inputs = sortedCopy(p.reads)
		ns.Tasks = append(ns.Tasks, t)
	}
	sort.Slice(ns.Tasks, func(i, j int) bool { return ns.Tasks[i].Name < ns.Tasks[j].Name })
	ns.Volumes = append(ns.Volumes, b.volumes...)
	sort.Slice(ns.Volumes, func(i, j int) bool { return ns.Volumes[i].Name < ns.Volumes[j].Name })
	return ns, nil
}

func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// inputHash hashes argv, env (sorted), the path, mode and content of every
// file read (each must be rendered on this node) and extra strings.
func (b *builder) inputHash(argv []string, env map[string]string, reads, extra []string) (string, error) {
	h := sha256.New()
	write := func(tag string, parts ...string) {
		fmt.Fprintf(h, "%s %d\n", tag, len(parts))
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s\n", len(p), p)
		}
	}
	write("argv", argv...)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		write("env", k, env[k])
	}
	paths := append([]string(nil), reads...)
	sort.Strings(paths)
	for _, p := range paths {
		f, ok := b.files[p]
		if !ok {
			return "", fmt.Errorf("input file %s is not rendered on %s: %w", p, b.node, ErrInvalid)
		}
		write("file", f.Path, fmt.Sprintf("%o", f.Mode), f.Content)
	}
	write("extra", extra...)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Hash is the content hash of a NodeState: the sha256 of its JSON with
// Generation cleared, so the caller can bump the generation exactly when it
// changes.
func Hash(ns *api.NodeState) string {
	c := *ns
	c.Generation = 0
	raw, err := json.Marshal(&c)
	if err != nil {
		// A NodeState holds only strings, numbers, slices and string maps.
		panic(fmt.Sprintf("render: marshal node state: %v", err))
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
