package agent

import (
	"context"

	"kcore.dev/kcore/pkg/api"
)

// purgeVolumes unmounts and deletes the volumes ns.PurgeVolumes lists, after
// the units that used them stopped. The volume manager refuses a volume kcore
// did not create; the item then fails and the volume is kept.
func (a *Applier) purgeVolumes(ctx context.Context, ns *api.NodeState, cs *ClusterState) []api.ItemStatus {
	var items []api.ItemStatus
	for _, v := range ns.PurgeVolumes {
		it := api.ItemStatus{Kind: KindVolume, Name: v.Name, State: api.ItemOK}
		switch {
		case cs.Purged[v.Name]:
			it.Message = "deleted"
		case ctx.Err() != nil:
			it.State, it.Message = api.ItemPending, "interrupted"
		case a.Volumes == nil:
			it.State, it.Message = api.ItemFailed, "this agent has no volume manager"
		default:
			if err := a.Volumes.Purge(ctx, v); err != nil {
				it.State, it.Message = api.ItemFailed, err.Error()
				a.log().Error("purge volume", "volume", v.Name, "err", err)
				break
			}
			a.log().Warn("deleted volume with its data", "volume", v.Name)
			delete(cs.Volumes, v.Name)
			cs.Purged[v.Name] = true
			it.Message = "deleted"
		}
		items = append(items, it)
	}
	return items
}
