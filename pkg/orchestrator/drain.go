package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Eviction retries within one pass while a disruption budget answers 429;
// later passes retry again until DrainTimeout.
const (
	evictAttempts = 3
	evictBackoff  = 200 * time.Millisecond
)

// drainStep cordons and drains a node leaving the cluster, one round per
// pass, and reports whether its teardown may start: once no pod but
// DaemonSet and mirror pods is left on it, once it turns out not to be
// registered with the Kubernetes API, or once DrainTimeout passed since the
// drain started (the condition then names what was left). The drain's
// progress is the condition Drained/<node>, so a new leader continues it.
func (o *Orchestrator) drainStep(ctx context.Context, k *kubeConn, cluster, node string, conds []api.Condition, now time.Time) ([]api.Condition, bool) {
	typ := CondDrainedPrefix + node
	start := now
	if cur := findCondition(conds, typ); cur != nil {
		if cur.Reason != ReasonDraining {
			return conds, true
		}
		if t, err := time.Parse(time.RFC3339, cur.Since); err == nil {
			start = t
		}
	}
	r, err := o.drainOnce(ctx, k, node)
	left := r.left
	switch {
	case err == nil && len(left) == 0:
		msg := "cordoned; no pod left but DaemonSet and mirror pods"
		if r.unregistered {
			msg = "not registered with the Kubernetes API: nothing to drain"
		}
		o.log.Info("drained node", "cluster", cluster, "node", node)
		return setCondition(conds, api.Condition{Type: typ, Status: StatusTrue, Reason: ReasonDrained, Message: msg}, now), true
	case now.Sub(start) >= o.cfg.DrainTimeout:
		msg := fmt.Sprintf("gave up draining after %s", o.cfg.DrainTimeout)
		if len(left) > 0 {
			msg += "; pods left: " + strings.Join(left, ", ")
		}
		if err != nil {
			msg += "; last error: " + err.Error()
		}
		o.log.Warn("drain timed out; tearing the node down anyway", "cluster", cluster, "node", node, "left", left, "err", err)
		return setCondition(conds, api.Condition{Type: typ, Status: StatusFalse, Reason: ReasonDrainTimedOut, Message: msg}, now), true
	}
	msg := "waiting for " + strings.Join(left, ", ") + " to leave"
	if err != nil {
		msg = err.Error()
	}
	return setCondition(conds, api.Condition{Type: typ, Status: StatusFalse, Reason: ReasonDraining, Message: msg}, start), false
}

// drainRound is what one drain round saw.
type drainRound struct {
	// left names the pods (namespace/name) still on the node.
	left []string
	// unregistered is true when the API does not know the node.
	unregistered bool
}

// drainOnce cordons node and asks to evict every pod on it that is not
// owned by a DaemonSet, not a mirror pod and not already terminating.
func (o *Orchestrator) drainOnce(ctx context.Context, k *kubeConn, node string) (drainRound, error) {
	var r drainRound
	kc, err := k.client()
	if err != nil {
		return r, err
	}
	n, err := kc.GetNode(ctx, node)
	if errors.Is(err, ErrKubeNotFound) {
		r.unregistered = true
		return r, nil
	}
	if err != nil {
		return r, err
	}
	if !n.Unschedulable {
		yes := true
		if err := kc.PatchNode(ctx, node, NodePatch{Unschedulable: &yes}); err != nil {
			return r, err
		}
	}
	pods, err := kc.NodePods(ctx, node)
	if err != nil {
		return r, err
	}
	var errs []error
	for _, p := range pods {
		if p.Mirror || slices.Contains(p.OwnerKinds, "DaemonSet") {
			continue
		}
		name := p.Namespace + "/" + p.Name
		if !p.Deleting {
			err := evict(ctx, kc, p)
			if errors.Is(err, ErrKubeNotFound) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		r.left = append(r.left, name)
	}
	return r, errors.Join(errs...)
}

// evict evicts one pod, retrying a few times while the API answers 429.
func evict(ctx context.Context, kc KubeClient, p KubePod) error {
	var err error
	for i := range evictAttempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(evictBackoff):
			}
		}
		err = kc.Evict(ctx, p.Namespace, p.Name)
		if !errors.Is(err, ErrKubeTooManyRequests) {
			return err
		}
	}
	return err
}

// deleteKubeNode deletes a removed node's Node object once its teardown was
// reported, so the kubelet cannot register it again. A node already gone is
// fine; on another error the teardown waits for a later pass, unless the
// empty state was published more than DrainTimeout ago (then it gives up).
func (o *Orchestrator) deleteKubeNode(ctx context.Context, k *kubeConn, cluster, node string, st *storedState, now time.Time) error {
	kc, err := k.client()
	if err == nil {
		err = kc.DeleteNode(ctx, node)
	}
	switch {
	case err == nil:
		o.log.Info("deleted kubernetes node", "cluster", cluster, "node", node)
		return nil
	case errors.Is(err, ErrKubeNotFound):
		return nil
	}
	if since, perr := time.Parse(time.RFC3339Nano, st.obj.ModifyTime); perr == nil && now.Sub(since) > o.cfg.DrainTimeout {
		o.log.Warn("could not delete the kubernetes node; giving up", "cluster", cluster, "node", node, "err", err)
		return nil
	}
	return err
}
