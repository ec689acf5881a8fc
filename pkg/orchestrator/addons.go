package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// CondAddons says whether the add-on workloads kcore installs (Cilium's
// agents and operator on a Cilium cluster, CoreDNS and, when rendered, the
// local-path provisioner) are available with all their replicas (an
// agent's on every node it should run on), and when not, what blocks them:
// a pod's image pull (with the image and the node), crash loop, sandbox
// error or scheduling failure.
const CondAddons = "Addons"

// Reasons of CondAddons besides the kubelet's own (ImagePullBackOff,
// ErrImagePull, CrashLoopBackOff, ContainerCreating, Unschedulable …),
// which are passed through.
const (
	ReasonAddonsAvailable = "Available"
	ReasonAddonMissing    = "NotFound"
	ReasonAddonNotReady   = "NotReady"
	ReasonAddonDown       = "Unavailable"
	ReasonAddonsUnchecked = "CheckFailed"
	ReasonAPINotReady     = "APINotReady"
)

// Bounds of what an add-on check reads from the Kubernetes API and writes
// into the condition.
const (
	// MaxAddonPods is how many pods are listed per add-on (limit=).
	MaxAddonPods = 20
	// MaxAddonBlockedPods is how many blocked pods are named per add-on;
	// only their events are read.
	MaxAddonBlockedPods = 3
	// MaxAddonEvents is how many events are listed per blocked pod.
	MaxAddonEvents = 20
	// MaxAddonText is how many bytes of any text read from the API (a
	// message, an image, a name) the condition keeps.
	MaxAddonText = 240
)

// DefaultAddonGrace is Config.AddonGrace's default.
const DefaultAddonGrace = 5 * time.Minute

// imagePull reports whether a container's waiting reason is the kubelet's
// for an image that cannot be pulled.
func imagePull(reason string) bool {
	switch reason {
	case "ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName", "RegistryUnavailable":
		return true
	}
	return false
}

// addonWorkloads are Cilium's agents and operator when the cluster runs
// Cilium (its render has the Cilium oneshot; render.CiliumWorkloads), then
// the Deployments of the add-on manifests rendered for the cluster in its
// slot's paths (render.Layout.AddonManifests), each once, in member order.
func addonWorkloads(c *api.KubernetesCluster, rendered map[string]*api.NodeState) ([]manifests.Workload, error) {
	var out []manifests.Workload
	if rendersUnit(rendered, render.ClusterLayout(c).UnitCilium) {
		out = render.CiliumWorkloads()
	}
	for _, path := range render.ClusterLayout(c).AddonManifests() {
		for _, m := range c.Spec.Members() {
			ns := rendered[m.NodeID]
			if ns == nil {
				continue
			}
			i := slices.IndexFunc(ns.Files, func(f api.File) bool { return f.Path == path })
			if i < 0 {
				continue
			}
			ds, err := manifests.Deployments(ns.Files[i].Content)
			if err != nil {
				return nil, fmt.Errorf("read add-on deployments of %s: %w", path, err)
			}
			out = append(out, ds...)
			break
		}
	}
	return out, nil
}

// rendersUnit reports whether any node of rendered has the unit.
func rendersUnit(rendered map[string]*api.NodeState, unit string) bool {
	for _, ns := range rendered {
		if slices.ContainsFunc(ns.Units, func(u api.Unit) bool { return u.Name == unit }) {
			return true
		}
	}
	return false
}

// addonBlock is why one pod of an add-on is not available.
type addonBlock struct {
	reason, text string
}

// checkAddons is CheckAddons over the cluster's connection.
func (o *Orchestrator) checkAddons(ctx context.Context, k *kubeConn, deps []manifests.Workload) api.Condition {
	if len(deps) == 0 {
		return CheckAddons(ctx, nil, deps)
	}
	kc, err := k.client()
	if err != nil {
		return api.Condition{Type: CondAddons, Status: StatusUnknown, Reason: ReasonAddonsUnchecked, Message: clip(err.Error())}
	}
	return CheckAddons(ctx, kc, deps)
}

// CheckAddons reads every add-on workload through kc, and for one not
// available with all its replicas, its pods (at most MaxAddonPods) and the
// events of the blocked ones, into CondAddons. kc is not used when there
// are no workloads.
func CheckAddons(ctx context.Context, kc KubeClient, deps []manifests.Workload) api.Condition {
	cond := api.Condition{Type: CondAddons, Status: StatusTrue, Reason: ReasonAddonsAvailable}
	if len(deps) == 0 {
		cond.Message = "no add-ons rendered"
		return cond
	}
	var parts []string
	for _, d := range deps {
		reason, text, err := addonState(ctx, kc, d)
		if err != nil {
			return api.Condition{Type: CondAddons, Status: StatusUnknown, Reason: ReasonAddonsUnchecked, Message: clip(err.Error())}
		}
		if reason != "" && cond.Status == StatusTrue {
			cond.Status, cond.Reason = StatusFalse, reason
		}
		parts = append(parts, text)
	}
	cond.Message = strings.Join(parts, "; ")
	return cond
}

// addonState says whether workload d (a Deployment, or a DaemonSet on
// every node it should run on) is available with all its replicas ("" reason)
// and what blocks it when not.
func addonState(ctx context.Context, kc KubeClient, d manifests.Workload) (string, string, error) {
	get := kc.GetDeployment
	if d.Kind == manifests.KindDaemonSet {
		get = kc.GetDaemonSet
	}
	dep, err := get(ctx, d.Namespace, d.Name)
	if errors.Is(err, ErrKubeNotFound) {
		return ReasonAddonMissing, fmt.Sprintf("%s %s not found (not applied yet)", strings.ToLower(d.Kind), d), nil
	}
	if err != nil {
		return "", "", err
	}
	head := fmt.Sprintf("%s %d/%d available", d, dep.AvailableReplicas, dep.Replicas)
	if dep.AvailableReplicas >= dep.Replicas {
		return "", head, nil
	}
	pods, err := kc.LabeledPods(ctx, d.Namespace, d.MatchLabels, MaxAddonPods)
	if err != nil {
		return "", "", err
	}
	var blocks []addonBlock
	more := 0
	for _, p := range pods {
		if p.Deleting || podReady(p) {
			continue
		}
		if len(blocks) == MaxAddonBlockedPods {
			more++
			continue
		}
		blocks = append(blocks, podBlock(ctx, kc, d.Namespace, p))
	}
	if len(blocks) == 0 {
		reason, why := deploymentBlock(dep, len(pods))
		return reason, head + ": " + why, nil
	}
	texts := make([]string, 0, len(blocks)+1)
	for _, b := range blocks {
		texts = append(texts, b.text)
	}
	if more > 0 {
		texts = append(texts, fmt.Sprintf("%d more pods not ready", more))
	}
	return blocks[0].reason, head + ": " + strings.Join(texts, "; "), nil
}

// deploymentBlock says why a Deployment none of whose listed pods is
// blocked is not available, from its conditions.
func deploymentBlock(dep *KubeDeployment, pods int) (string, string) {
	for _, typ := range []string{"ReplicaFailure", "Progressing", "Available"} {
		for _, c := range dep.Conditions {
			bad := c.Status == StatusFalse
			if typ == "ReplicaFailure" {
				bad = c.Status == StatusTrue
			}
			if c.Type == typ && bad {
				return reasonWord(c.Reason, ReasonAddonDown), clip(c.Type + " " + c.Reason + ": " + c.Message)
			}
		}
	}
	return ReasonAddonDown, fmt.Sprintf("%d pods, %d ready", pods, dep.ReadyReplicas)
}

// podReady reports whether the pod's Ready condition is True.
func podReady(p KubePodStatus) bool {
	i := slices.IndexFunc(p.Conditions, func(c KubeCondition) bool { return c.Type == "Ready" })
	return i >= 0 && p.Conditions[i].Status == StatusTrue
}

// podBlock says what keeps a pod from being ready: its scheduling, then
// the first container (init containers first) that waits, ended or is not
// ready; a pod whose containers are still being created, or not ready,
// gets its latest warning event (a sandbox or probe failure).
func podBlock(ctx context.Context, kc KubeClient, namespace string, p KubePodStatus) addonBlock {
	name := clip(p.Name)
	if i := slices.IndexFunc(p.Conditions, func(c KubeCondition) bool { return c.Type == "PodScheduled" }); i >= 0 && p.Conditions[i].Status == StatusFalse {
		sc := p.Conditions[i]
		return addonBlock{reasonWord(sc.Reason, "Unschedulable"), fmt.Sprintf("pod %s not scheduled: %s", name, clip(sc.Message))}
	}
	where := fmt.Sprintf("pod %s on node %s", name, clip(orNone(p.Node)))
	warning := func() string {
		if ev := latestWarning(ctx, kc, namespace, p.Name); ev != nil {
			return ": " + clip(ev.Reason) + ": " + clip(ev.Message)
		}
		return " (no warning event)"
	}
	for _, cs := range p.Containers {
		cname := clip(cs.Name)
		switch {
		case cs.Waiting != nil && imagePull(cs.Waiting.Reason):
			return addonBlock{cs.Waiting.Reason, fmt.Sprintf("pod %s: %s: image %s cannot be pulled on node %s: %s",
				name, cs.Waiting.Reason, clip(cs.Image), clip(orNone(p.Node)), clip(cs.Waiting.Message))}
		case cs.Waiting != nil && cs.Waiting.Reason == "CrashLoopBackOff":
			last := ""
			if t := cs.LastTerminated; t != nil {
				last = fmt.Sprintf(", last exit %s code %d", clip(t.Reason), t.ExitCode)
			}
			return addonBlock{cs.Waiting.Reason, fmt.Sprintf("%s: CrashLoopBackOff: container %s restarted %d times%s",
				where, cname, cs.RestartCount, last)}
		case cs.Waiting != nil && (cs.Waiting.Reason == "ContainerCreating" || cs.Waiting.Reason == "PodInitializing" || cs.Waiting.Reason == ""):
			return addonBlock{"ContainerCreating", where + ": ContainerCreating" + warning()}
		case cs.Waiting != nil:
			r := reasonWord(cs.Waiting.Reason, ReasonAddonNotReady)
			return addonBlock{r, fmt.Sprintf("%s: %s: container %s: %s", where, r, cname, clip(cs.Waiting.Message))}
		case cs.Terminated != nil && !(cs.Init && cs.Terminated.ExitCode == 0):
			r := reasonWord(cs.Terminated.Reason, "Terminated")
			return addonBlock{r, fmt.Sprintf("%s: container %s terminated: %s code %d", where, cname, r, cs.Terminated.ExitCode)}
		case cs.Running && !cs.Ready && !cs.Init:
			return addonBlock{ReasonAddonNotReady, fmt.Sprintf("%s: container %s running, not ready", where, cname) + warning()}
		}
	}
	if p.Node != "" && p.Phase == "Pending" {
		return addonBlock{"ContainerCreating", where + ": ContainerCreating" + warning()}
	}
	return addonBlock{ReasonAddonNotReady, fmt.Sprintf("%s: phase %s, not ready", where, clip(orNone(p.Phase)))}
}

// latestWarning is the pod's latest Warning event among at most
// MaxAddonEvents, nil when there is none or they cannot be read.
func latestWarning(ctx context.Context, kc KubeClient, namespace, pod string) *KubeEvent {
	evs, err := kc.PodEvents(ctx, namespace, pod, MaxAddonEvents)
	if err != nil {
		return nil
	}
	var best *KubeEvent
	var bestAt time.Time
	for i := range evs {
		if evs[i].Type != "Warning" {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, evs[i].Last)
		if best == nil || !at.Before(bestAt) {
			best, bestAt = &evs[i], at
		}
	}
	return best
}

// addonsOverdue reports whether CondAddons has been False for at least
// grace since both its last change and the cluster's bootstrap: a cluster
// that is ready then turns degraded (and a degraded one stays so).
func addonsOverdue(conds []api.Condition, now time.Time, grace time.Duration) bool {
	ad := findCondition(conds, CondAddons)
	bs := findCondition(conds, CondBootstrapped)
	if ad == nil || ad.Status != StatusFalse || bs == nil || bs.Status != StatusTrue {
		return false
	}
	since, err := time.Parse(time.RFC3339, ad.Since)
	if err != nil {
		return false
	}
	if boot, err := time.Parse(time.RFC3339, bs.Since); err == nil && boot.After(since) {
		since = boot
	}
	return now.Sub(since) >= grace
}

// clip keeps text read from the API on one line and at most MaxAddonText
// bytes (cut at a rune boundary, marked with "...").
func clip(s string) string {
	return clipTo(s, MaxAddonText)
}

// clipTo keeps s on one line and at most limit bytes (cut at a rune
// boundary, marked with "...").
func clipTo(s string, limit int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) <= limit {
		return s
	}
	cut := limit - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// reasonWord is r when it is a CamelCase word of at most 64 letters and
// digits, def otherwise: a condition's reason stays a word whatever the
// API says.
func reasonWord(r, def string) string {
	if r == "" || len(r) > 64 {
		return def
	}
	for _, c := range r {
		if c > unicode.MaxASCII || !(unicode.IsLetter(c) || unicode.IsDigit(c)) {
			return def
		}
	}
	return r
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// addonsCondition sets CondAddons from checkAddons once the API is ready;
// while it is not, a condition already there turns Unknown.
func (o *Orchestrator) addonsCondition(ctx context.Context, k *kubeConn, c *api.KubernetesCluster, rendered map[string]*api.NodeState, apiOK bool, conds []api.Condition, now time.Time) []api.Condition {
	if !apiOK {
		if findCondition(conds, CondAddons) == nil {
			return conds
		}
		return setCondition(conds, api.Condition{Type: CondAddons, Status: StatusUnknown, Reason: ReasonAPINotReady, Message: "checked once the API is ready"}, now)
	}
	deps, err := addonWorkloads(c, rendered)
	if err != nil {
		return setCondition(conds, api.Condition{Type: CondAddons, Status: StatusUnknown, Reason: ReasonAddonsUnchecked, Message: clip(err.Error())}, now)
	}
	cond := o.checkAddons(ctx, k, deps)
	if cond.Status != StatusTrue {
		if old := findCondition(conds, CondAddons); old == nil || old.Message != cond.Message {
			o.log.Info("add-ons not available", "cluster", c.Metadata.Name, "reason", cond.Reason, "message", cond.Message)
		}
	}
	return setCondition(conds, cond, now)
}
