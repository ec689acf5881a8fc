// Package tfprovider is the Terraform / OpenTofu provider of kcore
// (terraform-plugin-framework): resources kcore_kubernetes_cluster and
// kcore_cluster_update, data sources for nodes, a cluster's status and a
// kubeconfig, configured like kctl (controller addresses and credentials,
// or a kctl context).
//
// The resources' attributes and blocks are not written here: they are
// generated at run time from manifest.HCLSchema, the walk over the pkg/api
// types the HCL manifest reader uses, with descriptions from the embedded
// JSON Schemas, so a manifest's resource block, the JSON Schema and the
// provider cannot disagree. ModifyPlan asks the controller for its plan
// (POST /v1/plan): blocking issues become errors on the attribute they name,
// warnings become warnings, the steps per node are the plan_steps attribute;
// the plan's index and hash travel in the resource's private state and
// apply sends exactly them (POST /v1/apply), so a plan made stale by any
// write in between is refused.
package tfprovider
