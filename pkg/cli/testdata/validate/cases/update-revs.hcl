resource "kcore_cluster_update" "os" {
  name        = "release-0-5-0"
  version     = "0.5.0"
  flake_rev   = "3f9c2a7"
  nixpkgs_rev = "main"
  all_nodes   = true

  tested_os_pins {
    nixpkgs_rev        = "A71323F68D4377D12C04A5410E214495EC598D4C"
    ceph_rev           = "v19.2.0"
    ceph_sha256        = "abc"
    kubernetes_version = "latest"
  }
}
