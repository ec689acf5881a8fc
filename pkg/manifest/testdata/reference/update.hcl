resource "kcore_cluster_update" "os" {
  name                    = "release-0-5-0"
  version                 = "0.5.0"
  flake_ref               = "github:kcorehypervisor/kcore"
  flake_rev               = "<full-git-sha>"
  nixpkgs_rev             = "<nixpkgs-rev>"
  all_nodes               = true
  strategy                = "one-at-a-time"
  max_unavailable         = 1
  batch_size              = 1
  drain_vms               = false
  activation              = "auto"
  update_kind             = "kcore"
  schema_version          = 59
  previous_schema_version = 56
  min_compatible_reader   = 56
  approval                = "manual"
  approve                 = false

  tested_os_pins {
    nixpkgs_rev        = "<nixpkgs-rev>"
    ceph_rev           = "<ceph-rev>"
    ceph_sha256        = "<ceph-sha256>"
    kubernetes_version = "1.37.0"
  }
}
