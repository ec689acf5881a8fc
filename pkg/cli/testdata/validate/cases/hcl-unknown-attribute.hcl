resource "kcore_kubernetes_cluster" "lab" {
  cluster_cidr        = "10.244.0.0/16"
  service_cidr        = "10.96.0.0/12"
  api_server_endpoint = "192.168.40.1:6443"
  schedule_on_control_plane = true

  control_plane_node {
    node_id           = "node-1"
    advertise_addr    = "192.168.40.1"
  }
}
