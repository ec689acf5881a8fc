// Package cilium pins the images Cilium's Helm chart names for the release
// the lab builds (scripts/build-cilium.sh): the agent's and the generic
// operator's. scripts/build-images.sh --set cilium builds them on this
// machine from that release's commands, and pkg/render's chart tests check
// that the chart, rendered with the values a node sets, names exactly these.
package cilium

// The images, as the chart's values.yaml names them (image.repository and
// operator.image.repository with the -generic suffix, tagged with the
// release).
const (
	// AgentImage runs the agent's DaemonSet and its init containers.
	AgentImage = "quay.io/cilium/cilium:v1.20.2"
	// OperatorGenericImage runs the operator's Deployment.
	OperatorGenericImage = "quay.io/cilium/operator-generic:v1.20.2"
)
