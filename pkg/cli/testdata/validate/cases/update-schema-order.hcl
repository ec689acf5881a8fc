resource "kcore_cluster_update" "schema" {
  version                 = "0.5.0"
  all_nodes               = true
  schema_version          = 56
  previous_schema_version = 59
  min_compatible_reader   = 60
}
