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

  registry_mirror {
    registry  = "registry.k8s.io"
    endpoints = ["https://10.77.0.1:5000", "https://mirror.example:5443"]
    ca_pem    = <<EOT
-----BEGIN CERTIFICATE-----
MIIBljCCATugAwIBAgIUOPwyRqhNqslvdIaISoy1PZClwPYwCgYIKoZIzj0EAwIw
HzEdMBsGA1UEAwwUa2NvcmUgdGVzdCBtaXJyb3IgQ0EwIBcNMjYxMjAxMTgwNDMx
WhgPMjEyNjExMDcxODA0MzFaMB8xHTAbBgNVBAMMFGtjb3JlIHRlc3QgbWlycm9y
IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEDMRxwY+4J/PG6zlcxwO/bgG1
iVPrs1JjPe9O8xU1vMapTkTcc6xD25RXLFwLQk4p+P1YbEx1xEFi6pOaX4ZD6qNT
MFEwHQYDVR0OBBYEFBHBJrNr1RyPNgedBqp1gYDOI52YMB8GA1UdIwQYMBaAFBHB
JrNr1RyPNgedBqp1gYDOI52YMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
SQAwRgIhALs8Tccu0cyqr2k81CInzEDz58VKmhkZag2EnnDmojgjAiEA175z1/gt
o2qrejS745BGpjRphKIiqjep4AAgZ8qNaQQ=
-----END CERTIFICATE-----
EOT
  }
  registry_mirror {
    registry  = "docker.io"
    endpoints = ["http://10.77.0.1:5001"]
  }

  etcd_backup {
    interval = "6h"
    keep     = 14
    max_age  = "168h"
    target   = "controller"
  }

  initial_cluster = "node-1=https://192.168.40.1:2380"
}
