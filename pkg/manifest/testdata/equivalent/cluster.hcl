resource "kcore_kubernetes_cluster" "label-is-overridden" {
  name                = "every-field"
  labels              = { zone = "a" }
  cluster_cidr        = "10.244.0.0/16"
  service_cidr        = "10.96.0.0/12"
  cluster_dns         = "10.96.0.10"
  api_server_endpoint = "192.168.40.200:6443"
  cni                 = "cilium"

  cilium {
    mode                    = "native-routing"
    mtu                     = 1500
    tunnel                  = "disabled"
    auto_direct_node_routes = true
    load_balancer_ip_pools = [
      "192.168.40.224/29",
      "192.168.40.240/29",
    ]
  }

  control_plane_node {
    node_id           = "node-1"
    advertise_address = "192.168.40.1"
    iface             = "enp6s0"
  }
  control_plane_node {
    node_id           = "node-2"
    advertise_address = "192.168.40.2"
    iface             = "enp7s0"
  }
  worker_node {
    node_id           = "node-3"
    advertise_address = "192.168.40.3"
    iface             = "eth0"
  }

  high_availability {
    enabled       = true
    vip_address   = "192.168.40.200"
    vip_interface = "enp6s0"
    health_check  = false
  }

  schedule_on_control_plane = true

  local_provisioner {
    enabled            = true
    storage_class_name = "kcore-lvm"
    mode               = "lvm"
    volume {
      name          = "pool"
      node_id       = "node-1"
      storage_class = "lvm"
      size_bytes    = 53687091200
      fs_type       = "ext4"
      role          = "pool"
      volume_group  = "vg_kcore"
      mount_path    = ""
    }
  }

  initial_cluster = "node-1=https://192.168.40.1:2380"
}
