package manifests

// The container images kcore's clusters and its lab run, each a full
// reference (registry host, repository, tag): the one place their versions
// are pinned. The rendered manifests name exactly these strings, and
// scripts/build-images.sh reads this file to build and tag the images the lab
// serves from its own registry (the tests/images/<name>-<tag>/ module pins
// the source a tag is built from), so a tag changes here or nowhere.
const (
	// PauseImage is every pod's sandbox: containerd's pinned sandbox image,
	// which a node must be able to pull (or already hold) before any pod starts.
	PauseImage = "registry.k8s.io/pause:3.10"
	// CoreDNSImage runs the cluster DNS (CoreDNS).
	CoreDNSImage = "registry.k8s.io/coredns/coredns:v1.14.7"
	// LocalPathProvisionerImage runs the local-path provisioner.
	LocalPathProvisionerImage = "docker.io/rancher/local-path-provisioner:v0.0.30"
	// BusyboxImage runs the provisioner's helper pods, which create and
	// remove a volume's directory with sh, mkdir and rm.
	BusyboxImage = "docker.io/library/busybox:1.35.0"
	// EchoImage is the lab's test workload, an HTTP server answering with
	// its hostname (tests/images/echo); no rendered manifest uses it.
	EchoImage = "docker.io/kcore/echo:v2"
)
