package agent

import (
	"context"
	"fmt"
	"slices"
)

// removeOrder lists the units recorded in cs in the order they are
// removed: the units serving a CRI last, so kubelet is gone before their
// pods are drained and cannot start them again.
func removeOrder(cs *ClusterState) []string {
	names := sortedKeys(cs.Units)
	slices.SortStableFunc(names, func(x, y string) int {
		_, cx := cs.CRI[x]
		_, cy := cs.CRI[y]
		switch {
		case cx == cy:
			return 0
		case cy:
			return -1
		}
		return 1
	})
	return names
}

// drainUnit removes every pod sandbox of the CRI the recorded unit name
// serves, when it serves one and a drain is configured. A failed drain is
// logged and returned; the caller removes the unit anyway.
func (a *Applier) drainUnit(ctx context.Context, cs *ClusterState, name string) error {
	endpoint, ok := cs.CRI[name]
	if !ok || a.DrainPods == nil {
		return nil
	}
	a.log().Info("drain pods before removing unit", "unit", name, "endpoint", endpoint)
	if err := a.DrainPods(ctx, endpoint); err != nil {
		a.log().Error("drain pods before removing unit", "unit", name, "endpoint", endpoint, "err", err)
		return fmt.Errorf("drain pods of %s: %w", name, err)
	}
	return nil
}

// removeUnit stops the recorded unit name for good and forgets it; the
// caller drains its pods first (drainUnit).
func (a *Applier) removeUnit(ctx context.Context, cs *ClusterState, name string) error {
	if err := a.Runtime.Stop(ctx, name); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	a.removed++
	delete(cs.Units, name)
	delete(cs.CRI, name)
	delete(cs.Reloads, name)
	return nil
}
