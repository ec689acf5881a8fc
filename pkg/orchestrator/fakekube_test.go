package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// fakeKube is a small in-memory Kubernetes API serving the paths the
// orchestrator uses (nodes, node pods, evictions, and the add-ons'
// Deployments, pods and events), recording every call.
type fakeKube struct {
	mu     sync.Mutex
	nodes  map[string]*kubeNodeJSON
	pods   map[string][]*fakePod
	calls  []string
	rv     int
	addons fakeAddons
}

// fakePod is a pod bound to a node: tooMany 429s come before an eviction
// succeeds; a stuck pod only turns terminating when evicted.
type fakePod struct {
	namespace, name string
	owner           string
	mirror, stuck   bool
	deleting        bool
	tooMany         int
}

func newFakeKube() *fakeKube {
	return &fakeKube{nodes: map[string]*kubeNodeJSON{}, pods: map[string][]*fakePod{}}
}

// addNode registers a node as a kubelet does, with taints.
func (f *fakeKube) addNode(name string, taints ...KubeTaint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv++
	n := &kubeNodeJSON{}
	n.Metadata.Name = name
	n.Metadata.ResourceVersion = strconv.Itoa(f.rv)
	n.Metadata.Labels = map[string]string{"kubernetes.io/hostname": name}
	n.Spec.Taints = taints
	f.nodes[name] = n
}

func (f *fakeKube) addPod(node string, p *fakePod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods[node] = append(f.pods[node], p)
}

// node returns a copy of a stored node.
func (f *fakeKube) node(name string) (kubeNodeJSON, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return kubeNodeJSON{}, false
	}
	return *n, true
}

// takeCalls returns the calls so far and forgets them.
func (f *fakeKube) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeKube) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	call := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		call += "?" + r.URL.Query().Encode()
	}
	f.calls = append(f.calls, call)
	if f.serveAddons(w, r) {
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "nodes":
		f.serveNode(w, r, parts[1])
	case len(parts) == 1 && parts[0] == "pods" && r.Method == http.MethodGet:
		f.listPods(w, strings.TrimPrefix(r.URL.Query().Get("fieldSelector"), "spec.nodeName="))
	case len(parts) == 5 && parts[0] == "namespaces" && parts[2] == "pods" && parts[4] == "eviction" && r.Method == http.MethodPost:
		f.evict(w, parts[1], parts[3])
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeKube) serveNode(w http.ResponseWriter, r *http.Request, name string) {
	n, ok := f.nodes[name]
	if !ok {
		http.Error(w, `{"kind":"Status","reason":"NotFound"}`, http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		_ = json.NewEncoder(w).Encode(n)
	case http.MethodDelete:
		delete(f.nodes, name)
		fmt.Fprint(w, `{"kind":"Status","status":"Success"}`)
	case http.MethodPatch:
		if r.Header.Get("Content-Type") != "application/merge-patch+json" {
			http.Error(w, "unsupported patch type", http.StatusUnsupportedMediaType)
			return
		}
		var p struct {
			Metadata struct {
				ResourceVersion string             `json:"resourceVersion"`
				Labels          map[string]*string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Unschedulable *bool        `json:"unschedulable"`
				Taints        *[]KubeTaint `json:"taints"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if p.Metadata.ResourceVersion != "" && p.Metadata.ResourceVersion != n.Metadata.ResourceVersion {
			http.Error(w, `{"kind":"Status","reason":"Conflict"}`, http.StatusConflict)
			return
		}
		for k, v := range p.Metadata.Labels {
			if v == nil {
				delete(n.Metadata.Labels, k)
				continue
			}
			n.Metadata.Labels[k] = *v
		}
		if p.Spec.Unschedulable != nil {
			n.Spec.Unschedulable = *p.Spec.Unschedulable
		}
		if p.Spec.Taints != nil {
			n.Spec.Taints = *p.Spec.Taints
		}
		f.rv++
		n.Metadata.ResourceVersion = strconv.Itoa(f.rv)
		_ = json.NewEncoder(w).Encode(n)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (f *fakeKube) listPods(w http.ResponseWriter, node string) {
	items := []map[string]any{}
	for _, p := range f.pods[node] {
		meta := map[string]any{"name": p.name, "namespace": p.namespace}
		if p.owner != "" {
			meta["ownerReferences"] = []map[string]string{{"kind": p.owner, "name": "owner"}}
		}
		if p.mirror {
			meta["annotations"] = map[string]string{"kubernetes.io/config.mirror": "hash"}
		}
		if p.deleting {
			meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
		}
		items = append(items, map[string]any{"metadata": meta})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "PodList", "items": items})
}

func (f *fakeKube) evict(w http.ResponseWriter, namespace, name string) {
	for node, pods := range f.pods {
		for i, p := range pods {
			if p.namespace != namespace || p.name != name {
				continue
			}
			if p.tooMany > 0 {
				p.tooMany--
				http.Error(w, `{"kind":"Status","reason":"TooManyRequests"}`, http.StatusTooManyRequests)
				return
			}
			if p.stuck {
				p.deleting = true
			} else {
				f.pods[node] = append(pods[:i:i], pods[i+1:]...)
			}
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"kind":"Status","status":"Success"}`)
			return
		}
	}
	http.Error(w, `{"kind":"Status","reason":"NotFound"}`, http.StatusNotFound)
}

// setKubelet makes a registered node report Ready and a kubelet version,
// as its kubelet would after a restart.
func (f *fakeKube) setKubelet(name string, ready bool, version string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nodes[name]
	if !ok {
		return
	}
	status := "False"
	if ready {
		status = "True"
	}
	n.Status.Conditions = []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}{{Type: "Ready", Status: status}}
	n.Status.NodeInfo.KubeletVersion = version
}
