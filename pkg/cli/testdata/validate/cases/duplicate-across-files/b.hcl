resource "kcore_kubernetes_cluster" "lab" {
  cluster_cidr        = "10.245.0.0/16"
  service_cidr        = "10.112.0.0/12"
  cluster_dns         = "10.112.0.10"
  api_server_endpoint = "192.168.41.1:6443"
  schedule_on_control_plane = true

  control_plane_node {
    node_id           = "node-9"
    advertise_address = "192.168.41.1"
  }
}
