package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/manifests"
)

// workloadNS is the namespace the workload checks run in, removed after.
const workloadNS = "kcore-e2e"

// workloadTimeout bounds each wait of the workload checks: the first pull of
// an image through the lab registry included.
const workloadTimeout = 4 * time.Minute

// testWorkloads: the add-ons kcore renders run from images pulled through the
// lab registry mirror, an echo pod runs on every node, a pod on each node
// reaches the echo pod on the next node by its pod IP, reaches the echo
// Service by its DNS name, and resolves kubernetes.default; a local-path
// claim binds, a pod writes a file that lands on the node's kcore-mounted
// disk, and a second pod on the same claim reads it back.
func testWorkloads(t *testing.T, l *lab) {
	eventually(t, "CoreDNS and the provisioner available", workloadTimeout, func() error {
		for _, d := range []string{"kube-system/coredns", "local-path-storage/local-path-provisioner"} {
			ns, name, _ := strings.Cut(d, "/")
			out, err := l.kubectl("-n", ns, "get", "deployment", name, "-o", "jsonpath={.status.availableReplicas}/{.spec.replicas}")
			if err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
			have, want, _ := strings.Cut(strings.TrimSpace(out), "/")
			if have != want {
				return fmt.Errorf("%s: %s of %s replicas available", d, have, want)
			}
		}
		return nil
	})
	t.Cleanup(func() { _, _ = l.kubectl("delete", "namespace", workloadNS, "--wait=false") })
	nodes := labNodes()
	var objs []string
	objs = append(objs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", workloadNS))
	for _, n := range nodes {
		objs = append(objs, echoPod(n.id))
	}
	objs = append(objs, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: echo, namespace: %s}
spec:
  selector: {app: echo}
  ports: [{port: 80, targetPort: 8080}]
`, workloadNS))
	l.kubectlApply(t, objs...)
	ips := map[string]string{}
	eventually(t, "an echo pod running on every node", workloadTimeout, func() error {
		for _, n := range nodes {
			out, err := l.kubectl("-n", workloadNS, "get", "pod", "echo-"+n.id, "-o", "jsonpath={.status.phase} {.status.podIP} {.spec.nodeName}")
			if err != nil {
				return err
			}
			f := strings.Fields(out)
			if len(f) != 3 || f[0] != "Running" || f[2] != n.id {
				return fmt.Errorf("echo-%s: %q", n.id, out)
			}
			ips[n.id] = f[1]
		}
		return nil
	})
	l.waitServiceProgrammed(t, workloadNS, "echo", nodes)
	var clients []string
	for i, n := range nodes {
		next := nodes[(i+1)%len(nodes)]
		clients = append(clients, "client-"+n.id)
		l.kubectlApply(t, echoClientPod("client-"+n.id, n.id,
			fmt.Sprintf("http://%s:8080/=hostname: echo-%s", ips[next.id], next.id),
			fmt.Sprintf("http://echo.%s.svc.cluster.local/=hostname: echo-", workloadNS),
			"kubernetes.default.svc.cluster.local"))
	}
	for _, c := range clients {
		l.waitSucceeded(t, c)
	}

	l.kubectlApply(t, fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: %s}
spec:
  storageClassName: local-path
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 16Mi}}
`, workloadNS), oneShotPod("writer", nodes[1].id, "echo kcore-proof > /data/proof && sync", "data"))
	l.waitSucceeded(t, "writer")
	on := filepath.Join(l.dir, nodes[1].name, strings.TrimPrefix(diskVolume, "/"))
	found, err := filepath.Glob(filepath.Join(on, "*", "proof"))
	if err != nil || len(found) != 1 {
		t.Fatalf("the claim's file on %s's disk volume %s: %v %v", nodes[1].id, on, found, err)
	}
	if data, err := os.ReadFile(found[0]); err != nil || strings.TrimSpace(string(data)) != "kcore-proof" {
		t.Fatalf("%s: %q %v", found[0], data, err)
	}
	if out, err := l.kubectl("-n", workloadNS, "delete", "pod", "writer", "--wait=true", "--timeout=60s"); err != nil {
		t.Fatalf("delete the writer: %v\n%s", err, out)
	}
	l.kubectlApply(t, oneShotPod("reader", nodes[1].id, "grep -q kcore-proof /data/proof", "data"))
	l.waitSucceeded(t, "reader")
	t.Logf("workloads: echo on %d nodes, pod to pod across nodes, Service by DNS name, kubernetes.default resolved; claim data on %s survives its pod", len(nodes), found[0])
}

// echoPod is the echo server pinned to a node by its hostname label.
func echoPod(node string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: echo-%[1]s, namespace: %[2]s, labels: {app: echo}}
spec:
  nodeSelector: {kubernetes.io/hostname: %[1]s}
  containers:
  - name: echo
    image: %[3]s
    ports: [{containerPort: 8080}]
    readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 2}
`, node, workloadNS, manifests.EchoImage)
}

// echoClientPod runs the echo binary once on node as a client: a GET of
// each URL=SUBSTRING in order, then a lookup of name. (Debian's static
// busybox cannot resolve names: glibc's NSS needs shared libraries.)
func echoClientPod(name, node, get1, get2, lookup string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: %s}
  containers:
  - name: run
    image: %s
    args: [-get, %q, -get, %q, -lookup, %q]
`, name, workloadNS, node, manifests.EchoImage, get1, get2, lookup)
}

// oneShotPod runs script with busybox once on node; claim, when set, is
// mounted at /data. Its phase says whether the script passed.
func oneShotPod(name, node, script, claim string) string {
	vol := ""
	if claim != "" {
		vol = fmt.Sprintf("    volumeMounts: [{name: data, mountPath: /data}]\n  volumes: [{name: data, persistentVolumeClaim: {claimName: %s}}]\n", claim)
	}
	quoted, _ := json.Marshal(script)
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: %s}
spec:
  restartPolicy: Never
  nodeSelector: {kubernetes.io/hostname: %s}
  containers:
  - name: run
    image: %s
    command: [sh, -c, %s]
%s`, name, workloadNS, node, manifests.BusyboxImage, quoted, vol)
}

// kubectlApply applies the objects, as one YAML stream.
func (l *lab) kubectlApply(t *testing.T, objs ...string) {
	t.Helper()
	l.kubectlApplyTo(t, l.kubectl, objs...)
}

// kubectlApplyTo applies the objects, as one YAML stream, with kubectl, a
// kubectl of one of the lab's clusters.
func (l *lab) kubectlApplyTo(t *testing.T, kubectl func(...string) (string, error), objs ...string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(objs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl("apply", "-f", f); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// waitSucceeded waits for a one-shot pod to succeed and fails the test,
// with its log, as soon as it failed.
func (l *lab) waitSucceeded(t *testing.T, pod string) {
	t.Helper()
	l.waitSucceededIn(t, l.kubectl, workloadNS, pod)
}

// waitSucceededIn is waitSucceeded for a pod in namespace ns of the
// cluster kubectl talks to.
func (l *lab) waitSucceededIn(t *testing.T, kubectl func(...string) (string, error), ns, pod string) {
	t.Helper()
	var failed bool
	err := poll(workloadTimeout, func() error {
		out, err := kubectl("-n", ns, "get", "pod", pod, "-o", "jsonpath={.status.phase}")
		if err != nil {
			return err
		}
		switch strings.TrimSpace(out) {
		case "Succeeded":
			return nil
		case "Failed":
			failed = true
			return nil
		}
		return fmt.Errorf("pod %s: phase %q", pod, out)
	})
	if err != nil || failed {
		logs, _ := kubectl("-n", ns, "logs", pod)
		desc, _ := kubectl("-n", ns, "describe", "pod", pod)
		t.Fatalf("pod %s did not succeed (failed=%v, %v)\nlogs:\n%s\n%s", pod, failed, err, logs, desc)
	}
}

// waitServiceProgrammed waits until kube-proxy on each node has the Service's
// cluster IP in its iptables rules (the nat table of the node's namespace):
// a pod that connects before then goes out of the node undirected, and the
// lab's nodes, having no route off the bridge, answer "network is
// unreachable".
func (l *lab) waitServiceProgrammed(t *testing.T, namespace, name string, nodes []labNode) {
	t.Helper()
	ip, err := l.kubectl("-n", namespace, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}")
	if err != nil || strings.TrimSpace(ip) == "" {
		t.Fatalf("cluster IP of Service %s/%s: %q %v", namespace, name, ip, err)
	}
	ip = strings.TrimSpace(ip)
	eventually(t, "kube-proxy on every node programmed "+namespace+"/"+name, workloadTimeout, func() error {
		for _, n := range nodes {
			rules, err := run(10*time.Second, nil, "ip", "netns", "exec", labNetns(n.name), "iptables-save", "-t", "nat")
			if err != nil {
				return err
			}
			if !strings.Contains(rules, "-d "+ip+"/32") {
				return fmt.Errorf("%s: no nat rule for %s yet", n.id, ip)
			}
		}
		return nil
	})
}
