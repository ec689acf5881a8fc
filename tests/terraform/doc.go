// Package terraform runs a real OpenTofu (built and cached by
// scripts/build-tofu.sh) against the kcore provider binary
// (cmd/terraform-provider-kcore, installed through a dev_overrides CLI
// configuration, no registry) and a real controller (three tests/harness
// replicas serving the HTTPS API over loopback): create, update, a blocked
// change failing at plan with its attribute named, a stale saved plan
// refused, drift shown by the next plan, import with a clean plan after
// it, and destroy of a kcore_kubernetes_cluster; create, an in-place
// change, import and destroy of a kcore_cluster_update; and the kubeconfig
// data source, refused before the cluster has a PKI and then issuing a
// certificate of the cluster CA with the ttl asked.
//
// Without agents no cluster reaches ready, so the tests set the phase to
// ready where a change needs it, and the cluster PKI where a kubeconfig
// needs it, as the orchestrator would; the configurations leave wait_ready
// unset, and destroy leaves a cluster in phase deleting for the
// orchestrator, as kctl kubernetes delete without --wait does.
//
// The tests skip when no tofu binary is cached, unless KCORE_TOFU_REQUIRED
// is set (make test sets it after building tofu); KCORE_TOFU names another
// binary.
package terraform
