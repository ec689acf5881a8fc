package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
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
// on its first start are left out). reloads are those of reads the process
// reloads by itself when they change (leaf certificates and their keys):
// the hash covers only the certificate's identity (issuer, subject, SANs),
// so a renewal rewrites the files without restarting the unit, while a new
// name or CA still does. rereads are files the process reads again on
// SIGHUP: they are left out of the InputHash and make up the ReloadHash, so
// a change to them alone reloads the unit instead of restarting it.
type pendingUnit struct {
	unit     api.Unit
	reads    []string
	reloads  []string
	rereads  []string
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

// reloading marks paths, which the unit added last reads, as files its
// process reloads by itself when they change (see pendingUnit.reloads).
func (b *builder) reloading(paths ...string) {
	u := &b.units[len(b.units)-1]
	u.reloads = append(u.reloads, paths...)
}

// unitRereading adds a unit that reads the files in rereads again when it
// gets SIGHUP: they make up its ReloadHash, not its InputHash; the part of
// them a reload must not take (it restarts the unit) goes in extra.
func (b *builder) unitRereading(u api.Unit, reads, rereads []string, extra ...string) {
	b.units = append(b.units, pendingUnit{unit: u, reads: reads, rereads: rereads, extra: extra})
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
		h, err := b.inputHashReloading(argv, p.unit.Env, p.reads, p.reloads, append([]string{p.unit.Restart, fmt.Sprint(p.unit.Oneshot)}, p.extra...))
		if err != nil {
			return nil, fmt.Errorf("render unit %s: %w", p.unit.Name, err)
		}
		u := p.unit
		u.InputHash = h
		u.Inputs = sortedCopy(append(slices.Clone(p.reads), p.rereads...))
		if len(p.rereads) > 0 {
			if u.ReloadHash, err = b.inputHash(nil, nil, p.rereads, nil); err != nil {
				return nil, fmt.Errorf("render unit %s: %w", p.unit.Name, err)
			}
		}
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
	return b.inputHashReloading(argv, env, reads, nil, extra)
}

// inputHashReloading is inputHash where the files in reloads (a subset of
// reads) enter the hash as certIdentity.
func (b *builder) inputHashReloading(argv []string, env map[string]string, reads, reloads, extra []string) (string, error) {
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
		if slices.Contains(reloads, p) {
			write("reloaded", f.Path, fmt.Sprintf("%o", f.Mode), certIdentity(f.Content))
			continue
		}
		write("file", f.Path, fmt.Sprintf("%o", f.Mode), f.Content)
	}
	write("extra", extra...)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// certIdentity is what of a reloaded file restarts its unit: for a
// certificate its issuer, subject, SANs and authority key id; for a private
// key nothing (it changes with its certificate, which is hashed); anything
// else (plan placeholders, which already describe the identity) whole.
func certIdentity(content string) string {
	if strings.HasPrefix(content, "-----BEGIN PRIVATE KEY-----") {
		return "private key"
	}
	c, err := pki.ParseCert([]byte(content))
	if err != nil {
		return content
	}
	ips := make([]string, 0, len(c.IPAddresses))
	for _, ip := range c.IPAddresses {
		ips = append(ips, ip.String())
	}
	dns := slices.Clone(c.DNSNames)
	slices.Sort(ips)
	slices.Sort(dns)
	return fmt.Sprintf("issuer %x\nsubject %x\nauthority %x\nips %s\ndns %s\n",
		c.RawIssuer, c.RawSubject, c.AuthorityKeyId, strings.Join(ips, ","), strings.Join(dns, ","))
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
