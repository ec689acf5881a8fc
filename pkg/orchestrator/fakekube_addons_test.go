package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// fakeAddons is the part of fakeKube that serves Deployments, pods by
// label and events, as an add-on check reads them.
type fakeAddons struct {
	deployments map[string]*kubeDeploymentJSON // by namespace/name
	daemonSets  map[string]*kubeDaemonSetJSON  // by namespace/name
	pods        []*kubePodJSON
	events      []*kubeEventJSON
}

// setDeployment stores a Deployment with replicas wanted and available.
func (f *fakeKube) setDeployment(namespace, name string, replicas, available int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &kubeDeploymentJSON{}
	d.Metadata.Namespace, d.Metadata.Name = namespace, name
	d.Spec.Replicas = &replicas
	d.Status.AvailableReplicas, d.Status.ReadyReplicas = available, available
	if f.addons.deployments == nil {
		f.addons.deployments = map[string]*kubeDeploymentJSON{}
	}
	f.addons.deployments[namespace+"/"+name] = d
}

// setDaemonSet stores a DaemonSet that should run on desired nodes and is
// ready on ready of them.
func (f *fakeKube) setDaemonSet(namespace, name string, desired, ready int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &kubeDaemonSetJSON{}
	d.Metadata.Namespace, d.Metadata.Name = namespace, name
	d.Status.DesiredNumberScheduled, d.Status.NumberReady, d.Status.NumberAvailable = desired, ready, ready
	if f.addons.daemonSets == nil {
		f.addons.daemonSets = map[string]*kubeDaemonSetJSON{}
	}
	f.addons.daemonSets[namespace+"/"+name] = d
}

// addAddonPod stores a pod; edit fills in its status.
func (f *fakeKube) addAddonPod(namespace, name, node string, labels map[string]string, edit func(*kubePodJSON)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &kubePodJSON{}
	p.Metadata.Namespace, p.Metadata.Name, p.Metadata.Labels = namespace, name, labels
	p.Spec.NodeName = node
	p.Status.Phase = "Pending"
	if edit != nil {
		edit(p)
	}
	f.addons.pods = append(f.addons.pods, p)
}

// addEvent stores an event about a pod.
func (f *fakeKube) addEvent(namespace, pod, typ, reason, message, last string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := &kubeEventJSON{Type: typ, Reason: reason, Message: message, LastTimestamp: last}
	e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name = "Pod", namespace, pod
	f.addons.events = append(f.addons.events, e)
}

// clearAddons forgets every Deployment, pod and event.
func (f *fakeKube) clearAddons() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addons = fakeAddons{}
}

// serveAddons serves GET /apis/apps/v1/namespaces/NS/deployments/NAME and
// …/daemonsets/NAME,
// GET /api/v1/namespaces/NS/pods?labelSelector=&limit= and
// GET /api/v1/namespaces/NS/events?fieldSelector=&limit=; it reports
// whether it served r. Called with f.mu held.
func (f *fakeKube) serveAddons(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/apis/apps/v1/namespaces/"); ok {
		parts := strings.Split(rest, "/")
		if len(parts) != 3 {
			return false
		}
		var obj any
		switch parts[1] {
		case "deployments":
			if d, ok := f.addons.deployments[parts[0]+"/"+parts[2]]; ok {
				obj = d
			}
		case "daemonsets":
			if d, ok := f.addons.daemonSets[parts[0]+"/"+parts[2]]; ok {
				obj = d
			}
		default:
			return false
		}
		if obj == nil {
			http.Error(w, `{"kind":"Status","reason":"NotFound"}`, http.StatusNotFound)
			return true
		}
		_ = json.NewEncoder(w).Encode(obj)
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/namespaces/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 2 {
		return false
	}
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		limit = 1 << 30
	}
	switch parts[1] {
	case "pods":
		sel, err := parseSelector(q.Get("labelSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return true
		}
		items := []*kubePodJSON{}
		for _, p := range f.addons.pods {
			if p.Metadata.Namespace == parts[0] && matches(p.Metadata.Labels, sel) && len(items) < limit {
				items = append(items, p)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "PodList", "items": items})
		return true
	case "events":
		sel, err := parseSelector(q.Get("fieldSelector"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return true
		}
		items := []*kubeEventJSON{}
		for _, e := range f.addons.events {
			if e.InvolvedObject.Namespace == parts[0] && e.InvolvedObject.Kind == sel["involvedObject.kind"] &&
				e.InvolvedObject.Name == sel["involvedObject.name"] && len(items) < limit {
				items = append(items, e)
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kind": "EventList", "items": items})
		return true
	}
	return false
}

// parseSelector parses k=v,k2=v2.
func parseSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("selector %q: %q is not k=v", s, kv)
		}
		out[k] = v
	}
	return out, nil
}

func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
