resource "kcore_cluster_update" "counts" {
  version         = "0.5.0"
  all_nodes       = true
  strategy        = "batched"
  batch_size      = -1
  max_unavailable = -2
}
