package agent

import (
	"errors"
	"fmt"
	"sort"

	"kcore.dev/kcore/pkg/api"
)

// ErrOwnedByOtherCluster refuses a file, unit, task or volume that another
// cluster's state on this node already owns.
var ErrOwnedByOtherCluster = errors.New("owned by another cluster")

// claim is one thing a NodeState takes on the node: a file path, a unit or
// task name (one namespace: both are processes the runtime knows by name),
// a volume name or a mount path.
type claim struct{ kind, name string }

// claimsOf lists what ns takes on the node, each with the item kind its
// report uses.
func claimsOf(ns *api.NodeState) map[claim]string {
	out := map[claim]string{}
	for _, f := range ns.Files {
		out[claim{"path", f.Path}] = KindFile
	}
	for _, u := range ns.Units {
		out[claim{"process", u.Name}] = KindUnit
	}
	for _, t := range ns.Tasks {
		out[claim{"process", t.Name}] = KindTask
	}
	for _, v := range ns.Volumes {
		out[claim{"volume", v.Name}] = KindVolume
		if v.MountPath != "" {
			out[claim{"path", v.MountPath}] = KindVolume
		}
	}
	return out
}

// owners maps everything the clusters on this node own to its cluster:
// first what each cluster's applied state records (it was there first),
// then what the states being applied ask for, for what nobody recorded
// yet; where two clusters claim the same thing at the same time (recorded
// by an agent from before this check, or both new), the first by cluster
// name owns it.
func (a *Applier) owners(states []api.NodeState) map[claim]string {
	own := map[claim]string{}
	take := func(c claim, name string) {
		if _, ok := own[c]; !ok {
			own[c] = name
		}
	}
	for _, name := range sortedKeys(a.state.Clusters) {
		cs := a.state.Clusters[name]
		for p := range cs.Files {
			take(claim{"path", p}, name)
		}
		for u := range cs.Units {
			take(claim{"process", u}, name)
		}
		for t := range cs.Tasks {
			take(claim{"process", t}, name)
		}
		for v := range cs.Volumes {
			take(claim{"volume", v}, name)
		}
	}
	for i := range states {
		for c := range claimsOf(&states[i]) {
			take(c, states[i].Cluster)
		}
	}
	return own
}

// foreign checks ns against the owners: the items another cluster owns
// fail with ErrOwnedByOtherCluster and the rest of ns is pending (refused
// lists every item of ns), so a
// second cluster's state can never overwrite the first's files or restart
// its units. nil when ns takes nothing another cluster owns.
func foreign(ns *api.NodeState, own map[claim]string) (refused []api.ItemStatus, why string) {
	bad := map[string]error{}
	var taken []string
	for c, kind := range claimsOf(ns) {
		if o, ok := own[c]; ok && o != ns.Cluster {
			name := c.name
			if kind == KindVolume && c.kind == "path" {
				name = volumeAt(ns, c.name)
			}
			bad[kind+"/"+name] = fmt.Errorf("%s %s: %w %s", c.kind, c.name, ErrOwnedByOtherCluster, o)
			taken = append(taken, c.kind+" "+c.name+" (cluster "+o+")")
		}
	}
	if len(bad) == 0 {
		return nil, ""
	}
	sort.Strings(taken)
	why = fmt.Sprintf("another cluster on this node owns %s", joinMax(taken, maxNamedConflicts))
	process := func(kind, name string) api.ItemStatus {
		if err, ok := bad[kind+"/"+name]; ok {
			return api.ItemStatus{Kind: kind, Name: name, State: api.ItemFailed, Message: err.Error()}
		}
		return api.ItemStatus{Kind: kind, Name: name, State: api.ItemPending, Message: "not applied: " + why}
	}
	for _, f := range ns.Files {
		refused = append(refused, refusedItem(KindFile, f.Path, bad))
	}
	for _, v := range ns.Volumes {
		refused = append(refused, refusedItem(KindVolume, v.Name, bad))
	}
	for _, u := range ns.Units {
		refused = append(refused, process(KindUnit, u.Name))
	}
	for _, t := range ns.Tasks {
		refused = append(refused, process(KindTask, t.Name))
	}
	return refused, why
}

// maxNamedConflicts bounds how many conflicting items a refusal names.
const maxNamedConflicts = 5

func joinMax(s []string, n int) string {
	out := ""
	for i, v := range s {
		if i == n {
			return fmt.Sprintf("%s and %d more", out, len(s)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// volumeAt names the volume of ns mounted at path.
func volumeAt(ns *api.NodeState, path string) string {
	for _, v := range ns.Volumes {
		if v.MountPath == path {
			return v.Name
		}
	}
	return path
}
