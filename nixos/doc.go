// Package nixos holds kcore's NixOS modules (kcore-controller.nix,
// kcore-node-agent.nix, kcore-kubernetes.nix); its Go test checks that each
// parses with nix-instantiate.
package nixos
