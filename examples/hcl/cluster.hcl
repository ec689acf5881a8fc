# A three-control-plane cluster with a VIP and ZFS volumes, written in HCL.
# Attributes are the snake_case forms of the YAML fields; lists of nodes and
# volumes are repeated blocks. The block label is the cluster name.
resource "kcore_kubernetes_cluster" "edge" {
  cluster_cidr        = "10.246.0.0/16"
  service_cidr        = "10.112.0.0/12"
  cluster_dns         = "10.112.0.10"
  api_server_endpoint = "192.168.50.200:6443"
  cni                 = "cilium"

  cilium {
    mode                    = "native-routing"
    mtu                     = 1500
    tunnel                  = "disabled"
    auto_direct_node_routes = true
    load_balancer_ip_pools  = ["192.168.50.224/28"]
  }

  control_plane_node {
    node_id           = "edge-1"
    advertise_address = "192.168.50.11"
    iface             = "enp6s0"
  }
  control_plane_node {
    node_id           = "edge-2"
    advertise_address = "192.168.50.12"
    iface             = "enp6s0"
  }
  control_plane_node {
    node_id           = "edge-3"
    advertise_address = "192.168.50.13"
    iface             = "enp6s0"
  }
  worker_node {
    node_id           = "edge-4"
    advertise_address = "192.168.50.14"
  }

  high_availability {
    enabled       = true
    vip_address   = "192.168.50.200"
    vip_interface = "enp6s0"
  }

  local_provisioner {
    enabled            = true
    storage_class_name = "local-path"

    volume {
      name          = "data"
      node_id       = "edge-4"
      storage_class = "zfs"
      size_bytes    = 107374182400
      fs_type       = "xfs"
    }
  }
}
