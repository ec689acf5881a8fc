package api

// Overrides lists, as warnings, the values the user wrote that Default will
// replace, so no setting is changed without a word. Call it before Default:
// afterwards the written value is gone.
func (c *KubernetesCluster) Overrides() Issues {
	var v collector
	s := &c.Spec
	if port, bridge := forcesBridge(s.APIServerEndpoint); bridge && s.CNI == CNICilium {
		v.warnf("spec.cni", "cilium is replaced by bridge: the API port %s is not %s, and only the cluster on port %s runs Cilium (a second cluster on the same hosts uses the bridge CNI); use port %s for Cilium, or write cni: bridge",
			port, PrimaryAPIPort, PrimaryAPIPort, PrimaryAPIPort)
	}
	return v.issues
}
