package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// DefaultKubeTimeout bounds one Kubernetes API request.
const DefaultKubeTimeout = 5 * time.Second

// Errors a KubeClient wraps, from the HTTP status of the answer.
var (
	// ErrKubeNotFound is a 404: the object does not exist.
	ErrKubeNotFound = errors.New("not found")
	// ErrKubeTooManyRequests is a 429: an eviction a disruption budget
	// refuses for now.
	ErrKubeTooManyRequests = errors.New("too many requests")
	// ErrKubeConflict is a 409: the object changed since it was read.
	ErrKubeConflict = errors.New("conflict")
)

// KubeTaint is a Node taint.
type KubeTaint struct {
	// Key is the taint's key.
	Key string `json:"key"`
	// Value is the taint's value.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// KubeNode is the part of a Kubernetes Node the orchestrator reads.
type KubeNode struct {
	// Name is the node's name (kcore's node id).
	Name string
	// ResourceVersion is the version read, sent back on patches.
	ResourceVersion string
	// Labels are the node's labels.
	Labels map[string]string
	// Unschedulable is true when the node is cordoned.
	Unschedulable bool
	// Taints are the node's taints.
	Taints []KubeTaint
	// Ready is the node's Ready condition (the kubelet posts it).
	Ready bool
	// KubeletVersion is what the node's kubelet reports, e.g. v1.37.2.
	KubeletVersion string
}

// KubePod is the part of a Kubernetes Pod a drain reads.
type KubePod struct {
	// Namespace and Name name the pod.
	Namespace, Name string
	// OwnerKinds are the kinds of the pod's owner references.
	OwnerKinds []string
	// Mirror is true for a kubelet's mirror of a static pod.
	Mirror bool
	// Deleting is true once the pod has a deletion timestamp.
	Deleting bool
}

// NodePatch is a JSON merge patch of a Node: nil fields are left alone.
type NodePatch struct {
	// ResourceVersion, when set, makes the patch fail with
	// ErrKubeConflict if the node changed since it was read.
	ResourceVersion string
	// Labels are set on the node.
	Labels map[string]string
	// Unschedulable cordons (true) or uncordons (false) the node.
	Unschedulable *bool
	// Taints replace the node's taints when not nil.
	Taints *[]KubeTaint
}

// KubeClient is the Kubernetes API as the orchestrator uses it.
type KubeClient interface {
	// GetNode reads a Node; ErrKubeNotFound when it is not registered.
	GetNode(ctx context.Context, name string) (*KubeNode, error)
	// PatchNode applies a merge patch to a Node.
	PatchNode(ctx context.Context, name string, p NodePatch) error
	// NodePods lists the pods bound to a node.
	NodePods(ctx context.Context, node string) ([]KubePod, error)
	// Evict asks to evict a pod (ErrKubeTooManyRequests while a
	// disruption budget refuses, ErrKubeNotFound when it is gone).
	Evict(ctx context.Context, namespace, name string) error
	// DeleteNode deletes a Node object.
	DeleteNode(ctx context.Context, name string) error
	// GetDeployment reads a Deployment; ErrKubeNotFound when it does not
	// exist (yet).
	GetDeployment(ctx context.Context, namespace, name string) (*KubeDeployment, error)
	// GetDaemonSet reads a DaemonSet's counts as a KubeDeployment's
	// (Replicas the nodes it should run on); ErrKubeNotFound when it does
	// not exist (yet).
	GetDaemonSet(ctx context.Context, namespace, name string) (*KubeDeployment, error)
	// LabeledPods lists at most limit pods of namespace that carry every
	// label of matchLabels.
	LabeledPods(ctx context.Context, namespace string, matchLabels map[string]string, limit int) ([]KubePodStatus, error)
	// PodEvents lists at most limit events about a pod.
	PodEvents(ctx context.Context, namespace, pod string, limit int) ([]KubeEvent, error)
	// Close releases the client's connections.
	Close()
}

// KubeDialer returns a client of cluster c's Kubernetes API.
type KubeDialer func(c *api.KubernetesCluster, s *pki.ClusterSecrets) (KubeClient, error)

// DialKube returns an HTTPKube talking to https://<apiServerEndpoint> with
// the cluster CA and the admin client certificate, 5s per request.
func DialKube(c *api.KubernetesCluster, s *pki.ClusterSecrets) (KubeClient, error) {
	admin, err := adminPair(c, s)
	if err != nil {
		return nil, fmt.Errorf("dial kubernetes api: %w", err)
	}
	client, err := tlsClient(s.ClusterTrust(), admin, DefaultKubeTimeout)
	if err != nil {
		return nil, fmt.Errorf("dial kubernetes api: %w", err)
	}
	return &HTTPKube{Base: "https://" + c.Spec.APIServerEndpoint, Client: client}, nil
}

// HTTPKube is a KubeClient over plain HTTPS and JSON.
type HTTPKube struct {
	// Base is the API's base URL, e.g. https://10.0.0.100:6443.
	Base string
	// Client sends the requests.
	Client *http.Client
}

type kubeNodeJSON struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool        `json:"unschedulable"`
		Taints        []KubeTaint `json:"taints"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
		NodeInfo struct {
			KubeletVersion string `json:"kubeletVersion"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// GetNode reads a Node.
func (k *HTTPKube) GetNode(ctx context.Context, name string) (*KubeNode, error) {
	var n kubeNodeJSON
	if err := k.call(ctx, http.MethodGet, "/api/v1/nodes/"+url.PathEscape(name), "", nil, &n); err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	out := &KubeNode{
		Name: n.Metadata.Name, ResourceVersion: n.Metadata.ResourceVersion, Labels: n.Metadata.Labels,
		Unschedulable: n.Spec.Unschedulable, Taints: n.Spec.Taints, KubeletVersion: n.Status.NodeInfo.KubeletVersion,
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			out.Ready = c.Status == "True"
		}
	}
	return out, nil
}

// PatchNode sends p as application/merge-patch+json.
func (k *HTTPKube) PatchNode(ctx context.Context, name string, p NodePatch) error {
	meta := map[string]any{}
	if p.ResourceVersion != "" {
		meta["resourceVersion"] = p.ResourceVersion
	}
	if p.Labels != nil {
		meta["labels"] = p.Labels
	}
	spec := map[string]any{}
	if p.Unschedulable != nil {
		spec["unschedulable"] = *p.Unschedulable
	}
	if p.Taints != nil {
		taints := *p.Taints
		if taints == nil {
			taints = []KubeTaint{}
		}
		spec["taints"] = taints
	}
	body := map[string]any{}
	if len(meta) > 0 {
		body["metadata"] = meta
	}
	if len(spec) > 0 {
		body["spec"] = spec
	}
	if err := k.call(ctx, http.MethodPatch, "/api/v1/nodes/"+url.PathEscape(name), "application/merge-patch+json", body, nil); err != nil {
		return fmt.Errorf("patch node %s: %w", name, err)
	}
	return nil
}

// NodePods lists the pods bound to node in every namespace.
func (k *HTTPKube) NodePods(ctx context.Context, node string) ([]KubePod, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string            `json:"name"`
				Namespace         string            `json:"namespace"`
				Annotations       map[string]string `json:"annotations"`
				DeletionTimestamp string            `json:"deletionTimestamp"`
				OwnerReferences   []struct {
					Kind string `json:"kind"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		} `json:"items"`
	}
	path := "/api/v1/pods?fieldSelector=" + url.QueryEscape("spec.nodeName="+node)
	if err := k.call(ctx, http.MethodGet, path, "", nil, &list); err != nil {
		return nil, fmt.Errorf("list pods on %s: %w", node, err)
	}
	pods := make([]KubePod, 0, len(list.Items))
	for _, it := range list.Items {
		p := KubePod{Namespace: it.Metadata.Namespace, Name: it.Metadata.Name, Deleting: it.Metadata.DeletionTimestamp != ""}
		_, p.Mirror = it.Metadata.Annotations["kubernetes.io/config.mirror"]
		for _, o := range it.Metadata.OwnerReferences {
			p.OwnerKinds = append(p.OwnerKinds, o.Kind)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// Evict posts a policy/v1 Eviction for the pod.
func (k *HTTPKube) Evict(ctx context.Context, namespace, name string) error {
	body := map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]string{"name": name, "namespace": namespace},
	}
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(name) + "/eviction"
	if err := k.call(ctx, http.MethodPost, path, "application/json", body, nil); err != nil {
		return fmt.Errorf("evict pod %s/%s: %w", namespace, name, err)
	}
	return nil
}

// DeleteNode deletes a Node object.
func (k *HTTPKube) DeleteNode(ctx context.Context, name string) error {
	if err := k.call(ctx, http.MethodDelete, "/api/v1/nodes/"+url.PathEscape(name), "", nil, nil); err != nil {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	return nil
}

// Close closes idle connections.
func (k *HTTPKube) Close() { k.Client.CloseIdleConnections() }

// call sends one request; any 2xx is success, and 404, 409 and 429 wrap
// the matching sentinel error.
func (k *HTTPKube) call(ctx context.Context, method, path, contentType string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.Base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.Client.Do(req)
	if err != nil {
		return &unansweredError{what: method + " " + req.URL.String(), err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		msg := fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(data)))
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrKubeNotFound, msg)
		case http.StatusConflict:
			return fmt.Errorf("%w: %w", ErrKubeConflict, msg)
		case http.StatusTooManyRequests:
			return fmt.Errorf("%w: %w", ErrKubeTooManyRequests, msg)
		}
		return msg
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", method, path, err)
	}
	return nil
}
