package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// KubeCondition is a condition of a Kubernetes object's status.
type KubeCondition struct {
	// Type, Status, Reason and Message are as the API reports them.
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// KubeDeployment is the part of a Deployment (or a DaemonSet, see
// KubeClient.GetDaemonSet) an add-on check reads.
type KubeDeployment struct {
	// Replicas is spec.replicas (1 when unset).
	Replicas int
	// ReadyReplicas and AvailableReplicas are from its status.
	ReadyReplicas, AvailableReplicas int
	// Conditions are its status conditions (Available, Progressing,
	// ReplicaFailure).
	Conditions []KubeCondition
}

// KubeContainerState is a container's waiting or terminated state.
type KubeContainerState struct {
	// Reason is e.g. ImagePullBackOff, CrashLoopBackOff or Error.
	Reason string `json:"reason,omitempty"`
	// Message is what the kubelet says about it.
	Message string `json:"message,omitempty"`
	// ExitCode is a terminated container's exit code.
	ExitCode int `json:"exitCode,omitempty"`
}

// KubeContainerStatus is one container's status in a pod.
type KubeContainerStatus struct {
	// Name and Image are the container's.
	Name, Image string
	// Init is true for an init container.
	Init bool
	// Ready is the container's readiness.
	Ready bool
	// RestartCount counts its restarts.
	RestartCount int
	// Running is true while it runs; Waiting and Terminated are its other
	// states, nil unless it is in them.
	Running    bool
	Waiting    *KubeContainerState
	Terminated *KubeContainerState
	// LastTerminated is how its previous run ended, nil if none did.
	LastTerminated *KubeContainerState
}

// KubePodStatus is the part of a pod an add-on check reads.
type KubePodStatus struct {
	// Name is the pod's name.
	Name string
	// Node is spec.nodeName, "" while unscheduled.
	Node string
	// Phase is Pending, Running, Succeeded, Failed or Unknown.
	Phase string
	// Deleting is true once the pod has a deletion timestamp.
	Deleting bool
	// Conditions are PodScheduled, Initialized, ContainersReady, Ready.
	Conditions []KubeCondition
	// Containers are the init containers' statuses, then the containers'.
	Containers []KubeContainerStatus
}

// KubeEvent is the part of an event an add-on check reads.
type KubeEvent struct {
	// Type is Normal or Warning.
	Type string
	// Reason is e.g. FailedCreatePodSandBox.
	Reason string
	// Message says what happened.
	Message string
	// Last is when it last happened, RFC 3339 ("" when unknown).
	Last string
}

type kubeDeploymentJSON struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int `json:"replicas,omitempty"`
	} `json:"spec"`
	Status struct {
		ReadyReplicas     int             `json:"readyReplicas,omitempty"`
		AvailableReplicas int             `json:"availableReplicas,omitempty"`
		Conditions        []KubeCondition `json:"conditions,omitempty"`
	} `json:"status"`
}

type kubeDaemonSetJSON struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status struct {
		DesiredNumberScheduled int             `json:"desiredNumberScheduled"`
		NumberReady            int             `json:"numberReady"`
		NumberAvailable        int             `json:"numberAvailable,omitempty"`
		Conditions             []KubeCondition `json:"conditions,omitempty"`
	} `json:"status"`
}

type kubeContainerStatusJSON struct {
	Name         string `json:"name"`
	Image        string `json:"image"`
	Ready        bool   `json:"ready"`
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running    *struct{}           `json:"running,omitempty"`
		Waiting    *KubeContainerState `json:"waiting,omitempty"`
		Terminated *KubeContainerState `json:"terminated,omitempty"`
	} `json:"state"`
	LastState struct {
		Terminated *KubeContainerState `json:"terminated,omitempty"`
	} `json:"lastState"`
}

type kubePodJSON struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels,omitempty"`
		DeletionTimestamp string            `json:"deletionTimestamp,omitempty"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase                 string                    `json:"phase,omitempty"`
		Conditions            []KubeCondition           `json:"conditions,omitempty"`
		InitContainerStatuses []kubeContainerStatusJSON `json:"initContainerStatuses,omitempty"`
		ContainerStatuses     []kubeContainerStatusJSON `json:"containerStatuses,omitempty"`
	} `json:"status"`
}

type kubeEventJSON struct {
	InvolvedObject struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"involvedObject"`
	Type           string `json:"type"`
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	FirstTimestamp string `json:"firstTimestamp,omitempty"`
	LastTimestamp  string `json:"lastTimestamp,omitempty"`
	EventTime      string `json:"eventTime,omitempty"`
}

// GetDeployment reads an apps/v1 Deployment.
func (k *HTTPKube) GetDeployment(ctx context.Context, namespace, name string) (*KubeDeployment, error) {
	var d kubeDeploymentJSON
	path := "/apis/apps/v1/namespaces/" + url.PathEscape(namespace) + "/deployments/" + url.PathEscape(name)
	if err := k.call(ctx, http.MethodGet, path, "", nil, &d); err != nil {
		return nil, fmt.Errorf("get deployment %s/%s: %w", namespace, name, err)
	}
	out := &KubeDeployment{Replicas: 1, ReadyReplicas: d.Status.ReadyReplicas, AvailableReplicas: d.Status.AvailableReplicas, Conditions: d.Status.Conditions}
	if d.Spec.Replicas != nil {
		out.Replicas = *d.Spec.Replicas
	}
	return out, nil
}

// GetDaemonSet reads an apps/v1 DaemonSet: Replicas is the number of
// nodes it should run on (status.desiredNumberScheduled), ReadyReplicas and
// AvailableReplicas those whose pod is ready and available.
func (k *HTTPKube) GetDaemonSet(ctx context.Context, namespace, name string) (*KubeDeployment, error) {
	var d kubeDaemonSetJSON
	path := "/apis/apps/v1/namespaces/" + url.PathEscape(namespace) + "/daemonsets/" + url.PathEscape(name)
	if err := k.call(ctx, http.MethodGet, path, "", nil, &d); err != nil {
		return nil, fmt.Errorf("get daemonset %s/%s: %w", namespace, name, err)
	}
	return &KubeDeployment{Replicas: d.Status.DesiredNumberScheduled, ReadyReplicas: d.Status.NumberReady,
		AvailableReplicas: d.Status.NumberAvailable, Conditions: d.Status.Conditions}, nil
}

// LabeledPods lists at most limit pods of namespace carrying every label
// of matchLabels.
func (k *HTTPKube) LabeledPods(ctx context.Context, namespace string, matchLabels map[string]string, limit int) ([]KubePodStatus, error) {
	sel := labelSelector(matchLabels)
	q := url.Values{"labelSelector": {sel}, "limit": {strconv.Itoa(limit)}}
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods?" + q.Encode()
	var list struct {
		Items []kubePodJSON `json:"items"`
	}
	if err := k.call(ctx, http.MethodGet, path, "", nil, &list); err != nil {
		return nil, fmt.Errorf("list pods %s in %s: %w", sel, namespace, err)
	}
	items := list.Items
	if len(items) > limit {
		items = items[:limit]
	}
	pods := make([]KubePodStatus, 0, len(items))
	for _, it := range items {
		p := KubePodStatus{Name: it.Metadata.Name, Node: it.Spec.NodeName, Phase: it.Status.Phase,
			Deleting: it.Metadata.DeletionTimestamp != "", Conditions: it.Status.Conditions}
		for _, cs := range it.Status.InitContainerStatuses {
			p.Containers = append(p.Containers, containerStatus(cs, true))
		}
		for _, cs := range it.Status.ContainerStatuses {
			p.Containers = append(p.Containers, containerStatus(cs, false))
		}
		pods = append(pods, p)
	}
	return pods, nil
}

func containerStatus(cs kubeContainerStatusJSON, init bool) KubeContainerStatus {
	return KubeContainerStatus{
		Name: cs.Name, Image: cs.Image, Init: init, Ready: cs.Ready, RestartCount: cs.RestartCount,
		Running: cs.State.Running != nil, Waiting: cs.State.Waiting, Terminated: cs.State.Terminated,
		LastTerminated: cs.LastState.Terminated,
	}
}

// PodEvents lists at most limit events about a pod.
func (k *HTTPKube) PodEvents(ctx context.Context, namespace, pod string, limit int) ([]KubeEvent, error) {
	q := url.Values{
		"fieldSelector": {"involvedObject.kind=Pod,involvedObject.name=" + pod},
		"limit":         {strconv.Itoa(limit)},
	}
	path := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/events?" + q.Encode()
	var list struct {
		Items []kubeEventJSON `json:"items"`
	}
	if err := k.call(ctx, http.MethodGet, path, "", nil, &list); err != nil {
		return nil, fmt.Errorf("list events of pod %s/%s: %w", namespace, pod, err)
	}
	items := list.Items
	if len(items) > limit {
		items = items[:limit]
	}
	out := make([]KubeEvent, 0, len(items))
	for _, e := range items {
		last := e.LastTimestamp
		if last == "" {
			last = e.EventTime
		}
		if last == "" {
			last = e.FirstTimestamp
		}
		out = append(out, KubeEvent{Type: e.Type, Reason: e.Reason, Message: e.Message, Last: last})
	}
	return out, nil
}

// labelSelector is matchLabels as a label selector, k=v joined by commas
// in key order.
func labelSelector(matchLabels map[string]string) string {
	keys := make([]string, 0, len(matchLabels))
	for k := range matchLabels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+matchLabels[k])
	}
	return strings.Join(parts, ",")
}
