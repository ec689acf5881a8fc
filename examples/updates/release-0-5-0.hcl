# Roll kcore 0.5.0 out to every node, one at a time, after a manual approval:
# kctl apply -f examples/updates/release-0-5-0.hcl, then set approve = true.
resource "kcore_cluster_update" "os" {
  name                    = "release-0-5-0"
  version                 = "0.5.0"
  flake_ref               = "github:kcorehypervisor/kcore"
  flake_rev               = "3f9c2a7e4b1d8c6f0a5e2d9b7c4a1f8e6d3b0c95"
  nixpkgs_rev             = "a71323f68d4377d12c04a5410e214495ec598d4c"
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
    nixpkgs_rev        = "a71323f68d4377d12c04a5410e214495ec598d4c"
    ceph_rev           = "5dd24139a1eada541a3bc16b6941c5dde975e26d"
    ceph_sha256        = "0c6f2e4a9b8d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e"
    kubernetes_version = "1.37.0"
  }
}
