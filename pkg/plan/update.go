package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// updateSteps turns field changes into the steps the rules table implies,
// merged so each node and component appears once with its strongest
// disruption, ordered per node and then the add-ons on the bootstrap node.
func (b *builder) updateSteps(s *stepper, changes []change, cur *api.KubernetesCluster) {
	type cand struct {
		Step
		details []string
	}
	var cands []*cand
	index := map[string]*cand{}
	emit := func(node, component, action, disruption, detail string) {
		k := node + "|" + component
		c := index[k]
		if c == nil {
			c = &cand{Step: Step{Node: node, Component: component, Action: action, Disruption: disruption}}
			index[k] = c
			cands = append(cands, c)
		} else if disruptionRank(disruption) > disruptionRank(c.Disruption) {
			c.Action, c.Disruption = action, disruption
		}
		if detail != "" && !slices.Contains(c.details, detail) {
			c.details = append(c.details, detail)
		}
	}
	table := rules()
	for _, ch := range changes {
		for _, r := range table {
			if r.key != ch.key || (r.when != nil && !r.when(ch, cur)) {
				continue
			}
			for _, e := range r.effects {
				component := e.component
				if component == "" {
					component = volumeComponent(ch.volume)
				}
				detail := b.effectDetail(e, ch, cur)
				for _, node := range scopeNodes(e.scope, ch, cur) {
					emit(node, component, e.action, e.disruption, detail)
				}
			}
		}
	}
	order := nodeOrder(cur)
	pos := func(c *cand) (int, int, int) {
		addon := 0
		if isAddon(c.Component) {
			addon = 1
		}
		n := slices.Index(order, c.Node)
		if n < 0 {
			n = len(order)
		}
		return addon, n, componentRank(c.Component)
	}
	slices.SortStableFunc(cands, func(x, y *cand) int {
		xa, xn, xc := pos(x)
		ya, yn, yc := pos(y)
		if xa != ya {
			return xa - ya
		}
		if xn != yn {
			return xn - yn
		}
		return xc - yc
	})
	for _, c := range cands {
		s.add(c.Node, c.Component, c.Action, c.Disruption, strings.Join(c.details, "; "))
	}
}

func (b *builder) effectDetail(e effect, ch change, cur *api.KubernetesCluster) string {
	if e.detail != nil {
		return e.detail(ch, cur)
	}
	v, ok := findVolume(cur, ch.node, ch.volume)
	if !ok {
		return ""
	}
	if e.action == StepCreate {
		return b.volumeCreateDetail(cur, v)
	}
	return growDetail(cur, v, ch.oldSize)
}

func growDetail(c *api.KubernetesCluster, v api.VolumeSpec, from int64) string {
	name := api.VolumeName(c.Metadata.Name, v.NodeID, v.Name)
	how := "lvextend"
	if v.StorageClass == api.StorageClassZFS {
		how = "zfs set volsize"
	}
	if v.Role == api.VolumeRolePool {
		return fmt.Sprintf("grow thin pool %s from %s to %s (%s); online", name, humanBytes(from), humanBytes(v.SizeBytes), how)
	}
	fs := "resize2fs"
	if v.FSType == api.FSTypeXFS {
		fs = "xfs_growfs"
	}
	return fmt.Sprintf("grow %s from %s to %s (%s), then %s online; stays mounted", name, humanBytes(from), humanBytes(v.SizeBytes), how, fs)
}

func findVolume(c *api.KubernetesCluster, node, name string) (api.VolumeSpec, bool) {
	for _, v := range c.Spec.LocalProvisioner.Volumes {
		if v.NodeID == node && v.Name == name {
			return v, true
		}
	}
	return api.VolumeSpec{}, false
}

func scopeNodes(sc scope, ch change, cur *api.KubernetesCluster) []string {
	switch sc {
	case onControlPlanes:
		return memberIDs(cur.Spec.ControlPlaneNodes)
	case onAllNodes:
		return nodeOrder(cur)
	case onBootstrap:
		if boot := firstCP(cur); boot != "" {
			return []string{boot}
		}
		return nil
	default:
		return []string{ch.node}
	}
}
