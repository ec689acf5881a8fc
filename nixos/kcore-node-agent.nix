# kcore node agent: joins the controller, reports facts, applies the
# NodeStates rendered for this node. With runtime "nixos" (the default here)
# it writes /etc/kcore/node-state.json and runs `nixos-rebuild switch`, and
# kcore-kubernetes.nix turns that file into systemd services.
{ config, lib, pkgs, ... }:

let
  cfg = config.services.kcore.nodeAgent;
  inherit (lib) mkEnableOption mkIf mkOption optionals types;

  args =
    [ "${cfg.package}/bin/kcore-node-agent"
      "--node-id" cfg.nodeId
      "--root" cfg.root
      "--runtime" cfg.runtime
      "--log-level" cfg.logLevel
    ]
    ++ lib.concatMap (c: [ "--controller" c ]) cfg.controllers
    ++ optionals (cfg.binDir != null) [ "--bin-dir" cfg.binDir ]
    ++ optionals (cfg.caFile != null) [ "--ca-file" (toString cfg.caFile) ]
    ++ optionals (cfg.joinTokenFile != null) [ "--join-token-file" (toString cfg.joinTokenFile) ]
    ++ lib.concatMap (k: [ "--label" "${k}=${cfg.labels.${k}}" ]) (lib.attrNames cfg.labels)
    ++ lib.concatMap (a: [ "--arp-check" a ]) cfg.arpCheck;
in
{
  options.services.kcore.nodeAgent = {
    enable = mkEnableOption "the kcore node agent";

    package = mkOption {
      type = types.package;
      description = "The kcore package providing bin/kcore-node-agent.";
    };

    controllers = mkOption {
      type = types.nonEmptyListOf types.str;
      example = [ "10.0.0.1:7443" "10.0.0.2:7443" "10.0.0.3:7443" ];
      description = "Controller API addresses (host:port).";
    };

    nodeId = mkOption {
      type = types.str;
      example = "node-105";
      description = "This node's id, as the manifests name it.";
    };

    caFile = mkOption {
      type = types.nullOr types.path;
      default = null;
      description = "Controller CA certificate used to verify the controllers when joining.";
    };

    joinTokenFile = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "/run/keys/kcore-join-token";
      description = ''
        File holding the one-time join token made for this node id (`kctl node
        token create --node ID`; kept out of the Nix store). Only
        read on the first start; afterwards the node certificate under
        /var/lib/kcore/agent is used.
      '';
    };

    root = mkOption {
      type = types.str;
      default = "/";
      description = "Host root every path the agent writes is resolved under.";
    };

    runtime = mkOption {
      type = types.enum [ "supervisor" "systemd" "nixos" ];
      default = "nixos";
      description = "How units run: the NixOS module (nixos), plain systemd units, or the agent's built-in supervisor.";
    };

    binDir = mkOption {
      type = types.nullOr types.str;
      default = "/run/current-system/sw/bin";
      description = "Directory searched first for unit and task binaries.";
    };

    labels = mkOption {
      type = types.attrsOf types.str;
      default = { };
      example = { "kcore.dev/failure-domain" = "rack-1"; };
      description = "Node labels reported with the facts.";
    };

    arpCheck = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [ "192.168.40.200" ];
      description = "Addresses (ADDR or ADDR%IFACE) the facts check with arping; no other address is probed.";
    };

    logLevel = mkOption {
      type = types.enum [ "debug" "info" "warn" "error" ];
      default = "info";
      description = "Log level.";
    };
  };

  config = mkIf cfg.enable {
    # Units may run the agent's own binary (the etcd backup unit): on PATH
    # for the supervisor and systemd runtimes, in the system profile for
    # kcore-kubernetes.nix.
    environment.systemPackages = [ cfg.package ];

    systemd.services.kcore-node-agent = {
      description = "kcore node agent";
      wantedBy = [ "multi-user.target" ];
      wants = [ "network-online.target" ];
      after = [ "network-online.target" ];
      path = [ cfg.package ] ++ (with pkgs; [ lvm2 zfs e2fsprogs xfsprogs util-linux iputils systemd config.system.build.nixos-rebuild ]);
      serviceConfig = {
        ExecStart = lib.escapeShellArgs args;
        Restart = "always";
        RestartSec = 5;
        # Processes of the built-in supervisor outlive an agent restart and
        # are adopted by the next agent: never kill the whole cgroup.
        KillMode = "process";
        StateDirectory = "kcore";
        StateDirectoryMode = "0700";
      };
    };
  };
}
