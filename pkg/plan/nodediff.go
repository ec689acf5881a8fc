package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Item kinds of an ItemChange.
const (
	KindFile   = "file"
	KindUnit   = "unit"
	KindTask   = "task"
	KindVolume = "volume"
)

// Changes an ItemChange records. Files are added, changed or removed; units
// are started, restarted (their input hash changed), reloaded (only their
// reload hash changed: the agent sends the process SIGHUP, no restart),
// updated (a field the hash does not cover, e.g. After, changed: no
// restart) or stopped; tasks
// run (new or a new input hash) or are removed; volumes are created, grown,
// changed (a mount path), kept on disk (no longer rendered) or purged.
const (
	ChangeAdd     = "add"
	ChangeChange  = "change"
	ChangeRemove  = "remove"
	ChangeStart   = "start"
	ChangeRestart = "restart"
	ChangeReload  = "reload"
	ChangeUpdate  = "update"
	ChangeStop    = "stop"
	ChangeRun     = "run"
	ChangeCreate  = "create"
	ChangeGrow    = "grow"
	ChangeKeep    = "keep"
	ChangePurge   = "purge"
)

// Memberships of a NodeChange.
const (
	MembershipJoin  = "join"
	MembershipLeave = "leave"
)

// ItemChange is one rendered item that differs between two NodeStates.
type ItemChange struct {
	// Kind is file, unit, task or volume.
	Kind string `json:"kind"`
	// Name is the file path or the unit, task or volume name.
	Name string `json:"name"`
	// Change is what happens to it, e.g. add, restart, grow.
	Change string `json:"change"`
	// Reason is what the item is, from render (empty for items read back
	// from the store, which does not keep reasons).
	Reason string `json:"reason,omitempty"`
	// Because names, for a unit restart or a task run, the inputs that
	// changed: "argv", "env" or file paths it reads.
	Because []string `json:"because,omitempty"`
	// Objects names, for a changed Kubernetes manifest, the objects in it
	// that are added, changed or removed, e.g. "changed Service
	// kube-system/kube-dns".
	Objects []string `json:"objects,omitempty"`
	// Secret marks a key or kubeconfig: its content is never shown.
	Secret bool `json:"secret,omitempty"`
	// Digest is the new content's hash (a file's content, a unit's or
	// task's input hash, a volume's size); empty for a removal. It makes
	// the plan hash cover what is rendered, not only the manifests.
	Digest string `json:"digest,omitempty"`
}

// NodeChange is what applying the new NodeState of a node changes compared
// with the old one: NodeDiff's result. Items are ordered by kind (volumes,
// files, units, tasks) and then by name.
type NodeChange struct {
	// Node is the node id.
	Node string `json:"node"`
	// Membership is join (no old state), leave (no new state) or empty.
	Membership string `json:"membership,omitempty"`
	// Items are the differing files, units, tasks and volumes.
	Items []ItemChange `json:"items,omitempty"`
}

// Empty reports whether nothing changes on the node.
func (n NodeChange) Empty() bool { return n.Membership == "" && len(n.Items) == 0 }

// Restarts lists the units that start, restart or stop, sorted: what a
// roller must sequence (a reload keeps the process and its state, so it
// needs no step of its own).
func (n NodeChange) Restarts() []string {
	var out []string
	for _, it := range n.Items {
		if it.Kind == KindUnit && it.Change != ChangeUpdate && it.Change != ChangeReload {
			out = append(out, it.Name)
		}
	}
	return out
}

// Restarted reports whether unit is restarted (not started or stopped) by the change.
func (n NodeChange) Restarted(unit string) bool {
	return slices.ContainsFunc(n.Items, func(it ItemChange) bool {
		return it.Kind == KindUnit && it.Name == unit && it.Change == ChangeRestart
	})
}

// NodeDiff compares two renders of one node: old is what the node runs now
// (nil when it joins), cur what it must run (nil when it leaves). It is
// pure and the same for any order of the states' slices.
func NodeDiff(old, cur *api.NodeState) NodeChange {
	var out NodeChange
	switch {
	case old == nil && cur == nil:
		return out
	case old == nil:
		out.Node, out.Membership, old = cur.NodeID, MembershipJoin, &api.NodeState{}
	case cur == nil:
		out.Node, out.Membership, cur = old.NodeID, MembershipLeave, &api.NodeState{}
	default:
		out.Node = cur.NodeID
	}
	changedFiles := map[string]bool{}
	out.Items = append(out.Items, diffVolumeOps(old, cur)...)
	files := diffFiles(old.Files, cur.Files)
	for _, f := range files {
		changedFiles[f.Name] = true
	}
	out.Items = append(out.Items, files...)
	out.Items = append(out.Items, diffUnits(old.Units, cur.Units, changedFiles)...)
	return out.withItems(diffTasks(old.Tasks, cur.Tasks, changedFiles))
}

func (n NodeChange) withItems(items []ItemChange) NodeChange {
	n.Items = append(n.Items, items...)
	return n
}

func diffFiles(old, cur []api.File) []ItemChange {
	was := map[string]api.File{}
	for _, f := range old {
		was[f.Path] = f
	}
	var out []ItemChange
	for _, f := range cur {
		it := ItemChange{Kind: KindFile, Name: f.Path, Reason: f.Reason, Secret: f.Secret, Digest: digest(f.Content, f.Encoding, modeString(f.Mode))}
		o, ok := was[f.Path]
		delete(was, f.Path)
		switch {
		case !ok:
			it.Change = ChangeAdd
		case o.Content != f.Content || o.Mode != f.Mode || o.Encoding != f.Encoding || o.Secret != f.Secret:
			it.Change = ChangeChange
			if !f.Secret && f.Encoding == "" && o.Encoding == "" {
				it.Objects = objectChanges(f.Path, o.Content, f.Content)
			}
		default:
			continue
		}
		out = append(out, it)
	}
	for _, p := range sortedKeys(was) {
		o := was[p]
		out = append(out, ItemChange{Kind: KindFile, Name: p, Change: ChangeRemove, Reason: o.Reason, Secret: o.Secret})
	}
	return sortItems(out)
}

func diffUnits(old, cur []api.Unit, changedFiles map[string]bool) []ItemChange {
	was := map[string]api.Unit{}
	for _, u := range old {
		was[u.Name] = u
	}
	var out []ItemChange
	for _, u := range cur {
		it := ItemChange{Kind: KindUnit, Name: u.Name, Reason: u.Reason, Digest: u.InputHash}
		o, ok := was[u.Name]
		delete(was, u.Name)
		switch {
		case !ok:
			it.Change = ChangeStart
		case o.InputHash != u.InputHash:
			it.Change = ChangeRestart
			it.Because = because(o.Argv, u.Argv, o.Env, u.Env, u.Inputs, changedFiles)
		case o.ReloadHash != u.ReloadHash && u.ReloadHash != "":
			// What the agent does too (reloadDue): same input hash, a new
			// reload hash.
			it.Change = ChangeReload
			it.Because = because(nil, nil, nil, nil, u.Inputs, changedFiles)
		case !sameUnit(o, u):
			it.Change = ChangeUpdate
			it.Because = unitFields(o, u)
		default:
			continue
		}
		out = append(out, it)
	}
	for _, n := range sortedKeys(was) {
		out = append(out, ItemChange{Kind: KindUnit, Name: n, Change: ChangeStop, Reason: was[n].Reason})
	}
	return sortItems(out)
}

func diffTasks(old, cur []api.Task, changedFiles map[string]bool) []ItemChange {
	was := map[string]api.Task{}
	for _, t := range old {
		was[t.Name] = t
	}
	var out []ItemChange
	for _, t := range cur {
		it := ItemChange{Kind: KindTask, Name: t.Name, Reason: t.Reason, Digest: t.InputHash, Change: ChangeRun}
		o, ok := was[t.Name]
		delete(was, t.Name)
		switch {
		case !ok:
		case o.InputHash != t.InputHash:
			it.Because = because(o.Argv, t.Argv, nil, nil, t.Inputs, changedFiles)
		case !slices.Equal(o.After, t.After):
			it.Change = ChangeUpdate
		default:
			continue
		}
		out = append(out, it)
	}
	for _, n := range sortedKeys(was) {
		out = append(out, ItemChange{Kind: KindTask, Name: n, Change: ChangeRemove, Reason: was[n].Reason})
	}
	return sortItems(out)
}

func diffVolumeOps(old, cur *api.NodeState) []ItemChange {
	was := map[string]api.VolumeOp{}
	for _, v := range old.Volumes {
		was[v.Name] = v
	}
	purged := map[string]bool{}
	for _, v := range cur.PurgeVolumes {
		purged[v.Name] = true
	}
	var out []ItemChange
	for _, v := range cur.Volumes {
		it := ItemChange{Kind: KindVolume, Name: v.Name, Reason: v.Reason, Digest: digest(volumeOpString(v))}
		o, ok := was[v.Name]
		delete(was, v.Name)
		switch {
		case !ok:
			it.Change = ChangeCreate
		case v.SizeBytes > o.SizeBytes:
			it.Change = ChangeGrow
		case o != withReason(v, o.Reason):
			it.Change = ChangeChange
		default:
			continue
		}
		out = append(out, it)
	}
	for _, n := range sortedKeys(was) {
		change := ChangeKeep
		if purged[n] {
			change = ChangePurge
		}
		out = append(out, ItemChange{Kind: KindVolume, Name: n, Change: change, Reason: was[n].Reason})
	}
	return sortItems(out)
}

func withReason(v api.VolumeOp, reason string) api.VolumeOp {
	v.Reason = reason
	return v
}

func volumeOpString(v api.VolumeOp) string {
	return strings.Join([]string{v.Class, v.Pool, v.Device, v.FSType, v.Role, v.MountPath, strconv.FormatInt(v.SizeBytes, 10)}, " ")
}

// digest is the hex SHA-256 of parts, each length-prefixed.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func modeString(m uint32) string { return strconv.FormatUint(uint64(m), 8) }

// because names the inputs of a restarted unit or re-run task that changed.
func because(oldArgv, argv []string, oldEnv, env map[string]string, inputs []string, changedFiles map[string]bool) []string {
	var out []string
	if !slices.Equal(oldArgv, argv) {
		out = append(out, "argv")
	}
	if !maps.Equal(oldEnv, env) {
		out = append(out, "env")
	}
	for _, p := range slices.Sorted(slices.Values(inputs)) {
		if changedFiles[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func sameUnit(a, b api.Unit) bool { return len(unitFields(a, b)) == 0 }

// unitFields names the fields that differ between two versions of a unit
// besides its input hash.
func unitFields(a, b api.Unit) []string {
	var out []string
	for _, f := range []struct {
		name string
		same bool
	}{
		{"argv", slices.Equal(a.Argv, b.Argv)},
		{"env", maps.Equal(a.Env, b.Env)},
		{"after", slices.Equal(a.After, b.After)},
		{"restart", a.Restart == b.Restart && a.Oneshot == b.Oneshot},
		{"healthUrl", a.HealthURL == b.HealthURL},
		{"version", a.Version == b.Version},
		{"killMode", a.KillMode == b.KillMode},
	} {
		if !f.same {
			out = append(out, f.name)
		}
	}
	return out
}

func sortItems(items []ItemChange) []ItemChange {
	slices.SortStableFunc(items, func(a, b ItemChange) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return items
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
