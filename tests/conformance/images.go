// Package conformance pins the container images the upstream Kubernetes
// conformance tests (e2e.test from k8s.io/kubernetes/test/e2e) pull when
// make conformance runs the DNS, Services, Pods, ConfigMap, Secret and
// EmptyDir suites against the lab. scripts/build-images.sh --set conformance
// reads this file, builds each image here and tags it with exactly the
// reference e2e.test asks for (e2e.test --list-images), so the lab serves
// them through its registry mirror under their upstream names and e2e.test
// needs no registry override. No kcore code imports it.
package conformance

// The references test/utils/image/manifest.go of k8s.io/kubernetes v1.37.2
// names: a tag changes here when the pinned e2e.test changes.
const (
	// AgnhostImage is upstream's test workload (agnhost 2.66.1): web
	// servers, DNS probes (dig), exec pods of the Services tests.
	AgnhostImage = "registry.k8s.io/e2e-test-images/agnhost:2.66.1"
	// AgnhostPrevImage is the agnhost the Pods lifecycle test switches a
	// pod's image to; built from the same source as AgnhostImage.
	AgnhostPrevImage = "registry.k8s.io/e2e-test-images/agnhost:2.55"
	// BusyboxImage runs the ConfigMap, Secret, EmptyDir and Pods tests'
	// shell commands; built from Debian's busybox-static.
	BusyboxImage = "registry.k8s.io/e2e-test-images/busybox:1.37.0-2"
	// GlibcDNSTestingImage is the DNS tests' second querier: glibc's
	// resolver and dig.
	GlibcDNSTestingImage = "registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1"
	// NginxImage is the image the Pods generation test updates a pod to.
	NginxImage = "registry.k8s.io/e2e-test-images/nginx:1.27.0-2"
	// PauseImage is the pause image e2e.test runs as a do-nothing container
	// (not the kubelet's sandbox image, which manifests.PauseImage pins).
	PauseImage = "registry.k8s.io/pause:3.10.2"
)
