package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// secretName is the Secret object holding a cluster's PKI.
func secretName(cluster string) string { return "cluster/" + cluster }

// storedState is one stored NodeState with its secret files opened.
type storedState struct {
	obj  store.Object
	ns   api.NodeState
	hash string
}

// empty reports whether the state asks for nothing (a teardown).
func (s *storedState) empty() bool {
	return len(s.ns.Files) == 0 && len(s.ns.Units) == 0 && len(s.ns.Volumes) == 0 && len(s.ns.Tasks) == 0
}

// loadSecrets opens the cluster's stored PKI; ok is false when none is stored.
func (o *Orchestrator) loadSecrets(cluster string) (*pki.ClusterSecrets, *store.Object, error) {
	name := secretName(cluster)
	obj, ok := o.cfg.Node.State().Get(store.KindSecret, name)
	if !ok {
		return nil, nil, nil
	}
	var sealed store.Sealed
	if err := json.Unmarshal(obj.Data, &sealed); err != nil {
		return nil, nil, fmt.Errorf("load secrets of %s: %w", cluster, err)
	}
	pt, err := o.cfg.Keyring.Open(store.KindSecret, name, sealed)
	if err != nil {
		return nil, nil, fmt.Errorf("load secrets of %s: %w", cluster, err)
	}
	var s pki.ClusterSecrets
	if err := json.Unmarshal(pt, &s); err != nil {
		return nil, nil, fmt.Errorf("load secrets of %s: %w", cluster, err)
	}
	return &s, &obj, nil
}

// ensureSecrets returns the cluster's PKI, issued or brought up to date
// (a CA rotation moved to its next phase once the last one settled), and
// the put that stores it sealed when anything changed (nil otherwise).
func (o *Orchestrator) ensureSecrets(c *api.KubernetesCluster, now time.Time) (*pki.ClusterSecrets, *store.Op, error) {
	name := c.Metadata.Name
	s, obj, err := o.loadSecrets(name)
	if err != nil {
		return nil, nil, err
	}
	expect := store.Expect(0)
	if s == nil {
		s = &pki.ClusterSecrets{}
		if _, err = s.EnsureFor(c, now, o.cfg.Lifetime); err != nil {
			return nil, nil, fmt.Errorf("issue secrets of %s: %w", name, err)
		}
	} else {
		var advanced []string
		if st := s.CAState(); caPhaseSettled(c, st) {
			if err := s.AdvanceCARotation(); err != nil {
				return nil, nil, fmt.Errorf("advance ca rotation of %s: %w", name, err)
			}
			next := s.CAState()
			o.log.Info("ca rotation phase settled", "cluster", name, "from", st.Key(), "to", next.Key())
			advanced = append(advanced, "caRotation")
		}
		changed, err := s.EnsureFor(c, now, o.cfg.Lifetime)
		if err != nil {
			return nil, nil, fmt.Errorf("renew secrets of %s: %w", name, err)
		}
		changed = append(advanced, changed...)
		if len(changed) == 0 {
			return s, nil, nil
		}
		o.log.Info("cluster certificates issued", "cluster", name, "changed", changed)
		expect = store.Expect(obj.ModifyIndex)
	}
	pt, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("encode secrets of %s: %w", name, err)
	}
	sealed, err := o.cfg.Keyring.Seal(store.KindSecret, secretName(name), pt)
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(sealed)
	if err != nil {
		return nil, nil, fmt.Errorf("encode secrets of %s: %w", name, err)
	}
	return s, &store.Op{Put: &store.Put{Kind: store.KindSecret, Name: secretName(name), Data: data, ExpectModifyIndex: expect}}, nil
}

// caPhaseSettled reports whether the CA rotation phase st reached every
// member of the stored cluster c: its status records the phase (a pass
// rendered it), the spec rollout planned for it ran to its end (or none was
// needed), and the cluster is ready at its spec generation, every member
// having applied its state since.
func caPhaseSettled(c *api.KubernetesCluster, st api.CAState) bool {
	if st.Rotation == nil || c.CAStateStored().Key() != st.Key() {
		return false
	}
	if c.Status.Phase != api.PhaseReady || c.Status.ObservedGeneration != c.Metadata.Generation {
		return false
	}
	ro := c.Status.SpecRollout
	return ro == nil || (ro.CA == st.Key() && ro.Generation == c.Metadata.Generation && ro.Phase == api.SpecRolloutDone)
}

// loadStates returns the cluster's stored NodeStates by node id, secret
// files opened, with their content hashes.
func (o *Orchestrator) loadStates(cluster string) (map[string]*storedState, error) {
	out := map[string]*storedState{}
	for _, obj := range o.cfg.Node.State().ListPrefix(api.KindNodeState, cluster+"/") {
		node := strings.TrimPrefix(obj.Name, cluster+"/")
		var ns api.NodeState
		if err := json.Unmarshal(obj.Data, &ns); err != nil {
			return nil, fmt.Errorf("decode node state %s: %w", obj.Name, err)
		}
		for i := range ns.Files {
			f := &ns.Files[i]
			if !f.Secret {
				continue
			}
			pt, err := o.cfg.Keyring.OpenString(api.KindNodeState, obj.Name, f.Content)
			if err != nil {
				return nil, fmt.Errorf("open node state %s: %w", obj.Name, err)
			}
			f.Content = pt
		}
		out[node] = &storedState{obj: obj, ns: ns, hash: render.Hash(&ns)}
	}
	return out, nil
}

// putState returns the CAS put that stores ns (secret files sealed) in place
// of old (nil: not stored yet).
func (o *Orchestrator) putState(ns *api.NodeState, old *storedState) (store.Op, error) {
	name := apiv1.NodeStateName(ns.Cluster, ns.NodeID)
	sealed := *ns
	sealed.Files = make([]api.File, len(ns.Files))
	for i, f := range ns.Files {
		if f.Secret {
			ct, err := o.cfg.Keyring.SealString(api.KindNodeState, name, f.Content)
			if err != nil {
				return store.Op{}, err
			}
			f.Content = ct
		}
		sealed.Files[i] = f
	}
	data, err := json.Marshal(&sealed)
	if err != nil {
		return store.Op{}, fmt.Errorf("encode node state %s: %w", name, err)
	}
	expect := store.Expect(0)
	if old != nil {
		expect = store.Expect(old.obj.ModifyIndex)
	}
	return store.Op{Put: &store.Put{Kind: api.KindNodeState, Name: name, Data: data, ExpectModifyIndex: expect}}, nil
}

// loadReports returns the cluster's stored NodeReports by node id.
func (o *Orchestrator) loadReports(cluster string) map[string]*reportObj {
	out := map[string]*reportObj{}
	for _, obj := range o.cfg.Node.State().ListPrefix(apiv1.KindNodeReport, cluster+"/") {
		var r api.NodeReport
		if err := json.Unmarshal(obj.Data, &r); err != nil {
			o.log.Warn("ignore unreadable node report", "name", obj.Name, "err", err)
			continue
		}
		out[strings.TrimPrefix(obj.Name, cluster+"/")] = &reportObj{obj: obj, r: r}
	}
	return out
}

// reportObj is one stored NodeReport.
type reportObj struct {
	obj store.Object
	r   api.NodeReport
}

// loadNodes returns the registered Node objects of the cluster's members.
func (o *Orchestrator) loadNodes(c *api.KubernetesCluster) map[string]*api.Node {
	out := map[string]*api.Node{}
	for _, m := range c.Spec.Members() {
		obj, ok := o.cfg.Node.State().Get(api.KindNode, m.NodeID)
		if !ok {
			continue
		}
		var n api.Node
		if err := json.Unmarshal(obj.Data, &n); err != nil {
			o.log.Warn("ignore unreadable node", "node", m.NodeID, "err", err)
			continue
		}
		out[m.NodeID] = &n
	}
	return out
}
