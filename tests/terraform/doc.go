// Package terraform runs a real OpenTofu (built and cached by
// scripts/build-tofu.sh) against the kcore provider binary
// (cmd/terraform-provider-kcore, installed through a dev_overrides CLI
// configuration, no registry) and a real controller (three tests/harness
// replicas serving the HTTPS API over loopback): create, update, a blocked
// change failing at plan with its attribute named, a stale saved plan
// refused, drift shown by the next plan, import, and destroy.
//
// Without agents no cluster reaches ready, so the test sets the phase to
// ready where a change needs it and the configurations leave wait_ready unset; destroy then leaves the cluster in phase deleting for
// the orchestrator, as kctl kubernetes delete without --wait does.
//
// The tests skip when no tofu binary is cached, unless KCORE_TOFU_REQUIRED
// is set (make test sets it after building tofu); KCORE_TOFU names another
// binary.
package terraform
