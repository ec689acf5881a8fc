package render

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"kcore.dev/kcore/pkg/api"
)

// ErrNoSlot is returned when every slot is taken on a cluster's machines.
var ErrNoSlot = errors.New("no free slot")

// Occupant is a stored cluster as Place sees it: its name, slot and the
// machines its members run on.
type Occupant struct {
	Name  string
	Slot  int
	Nodes []string
}

// OccupantOf is c as an Occupant.
func OccupantOf(c *api.KubernetesCluster) Occupant {
	o := Occupant{Name: c.Metadata.Name, Slot: c.Status.Slot}
	for _, m := range c.Spec.Members() {
		o.Nodes = append(o.Nodes, m.NodeID)
	}
	return o
}

// Place decides where cluster c goes among the other stored clusters
// (others; c itself is skipped by name) and returns the status fields it
// records: Slot and Shared. stored is c as stored, nil on create.
//
// A cluster is placed once, when it is created: it takes the lowest slot
// no other cluster on any of its machines holds, so the first cluster on a
// set of machines is primary (slot 0) and keeps the reference's names, and
// a later cluster can never take that slot from it. A stored cluster keeps
// its slot forever. Shared lists the members whose machine already ran
// another cluster when they joined: those run no kubelet (a machine is a
// node of one cluster only). A stored cluster keeps its Shared members and
// adds only members new to it that land on a machine another cluster uses,
// so a cluster created later never takes a kubelet from one that was there
// first.
func Place(c *api.KubernetesCluster, others []Occupant, stored *api.KubernetesCluster) (slot int, shared []string, err error) {
	name := c.Metadata.Name
	onNode := map[string][]Occupant{}
	for _, o := range others {
		if o.Name == name {
			continue
		}
		for _, n := range o.Nodes {
			onNode[n] = append(onNode[n], o)
		}
	}
	used := map[int]bool{}
	for _, m := range c.Spec.Members() {
		for _, o := range onNode[m.NodeID] {
			used[o.Slot] = true
		}
		joins := stored == nil || !slices.ContainsFunc(stored.Spec.Members(), func(n api.ClusterNode) bool { return n.NodeID == m.NodeID })
		kept := stored != nil && !joins && slices.Contains(stored.Status.Shared, m.NodeID)
		if kept || joins && len(onNode[m.NodeID]) > 0 {
			shared = append(shared, m.NodeID)
		}
	}
	sort.Strings(shared)
	if stored != nil {
		return stored.Status.Slot, shared, nil
	}
	for s := PrimarySlot; s < MaxSlots; s++ {
		if !used[s] {
			return s, shared, nil
		}
	}
	return 0, nil, fmt.Errorf("place cluster %s: %d clusters already share its machines: %w", name, MaxSlots, ErrNoSlot)
}
