# kcore Kubernetes units: every unit the controller rendered for this node,
# read from the node agent's /etc/kcore/node-state.json, becomes a systemd
# service of the same name (kcore-containerd, kcore-etcd, kcore-kube-apiserver,
# kcore-kubernetes-cilium, kcore-kubernetes-provisioner, kcore-keepalived with
# its VRRP instance kcore_api, …). A unit restarts exactly when its inputHash
# changes, and reloads (SIGHUP) when only its reloadHash changes. kcore renders containerd's configuration and runs it as
# kcore-containerd (killMode process: its shims and containers outlive a
# restart), so NixOS's own virtualisation.containerd must stay off. Reading the state file is impure: flake users rebuild with --impure
# (the agent's `nixos-rebuild switch` is not a flake build).
{ config, lib, pkgs, ... }:

let
  cfg = config.services.kcore.kubernetes;
  inherit (lib) mkEnableOption mkIf mkOption types;

  state =
    if builtins.pathExists cfg.stateFile
    then builtins.fromJSON (builtins.readFile cfg.stateFile)
    else { units = [ ]; };

  binDir =
    if cfg.binDir != null then cfg.binDir
    else state.binDir or "/run/current-system/sw/bin";

  executable = argv0: if lib.hasPrefix "/" argv0 then argv0 else "${binDir}/${argv0}";

  restartPolicy = u:
    let oneshot = u.oneshot or false;
        policy = u.restart or (if oneshot then "on-failure" else "always");
    in if oneshot && policy == "always" then "on-failure" else policy;

  mkUnit = u: lib.nameValuePair u.name {
    description = "kcore ${u.name}";
    wantedBy = [ "multi-user.target" ];
    wants = [ "network-online.target" ];
    after = [ "network-online.target" ] ++ map (a: "${a}.service") (u.after or [ ]);
    environment = u.env or { };
    path = cfg.packages;
    # The rendered hash of every input (argv, env, files): a change restarts the unit.
    restartTriggers = [ u.inputHash ];
    # The files the process reads again on SIGHUP (keepalived's configuration):
    # a change to them alone reloads the unit instead.
    reloadTriggers = lib.optional (u ? reloadHash) u.reloadHash;
    serviceConfig = {
      Type = if u.oneshot or false then "oneshot" else "simple";
      RemainAfterExit = u.oneshot or false;
      ExecStart = lib.escapeShellArgs ([ (executable (builtins.head u.argv)) ] ++ builtins.tail u.argv);
      Restart = restartPolicy u;
      KillMode = if (u.killMode or "") == "process" then "process" else "control-group";
      Delegate = (u.killMode or "") == "process";
      TimeoutStopSec = 10;
    } // lib.optionalAttrs (u ? reloadHash) {
      ExecReload = "${pkgs.coreutils}/bin/kill -HUP $MAINPID";
    } // lib.optionalAttrs (restartPolicy u != "no") { RestartSec = 2; };
  };

  units = builtins.filter (u: lib.hasPrefix "kcore-" u.name) state.units;
in
{
  options.services.kcore.kubernetes = {
    enable = mkEnableOption "the kcore Kubernetes units rendered by the controller";

    stateFile = mkOption {
      type = types.str;
      default = "/etc/kcore/node-state.json";
      description = "The node agent's JSON state ({ binDir, units }) the units are built from.";
    };

    binDir = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = "Directory for bare argv[0]s; null uses the state file's binDir.";
    };

    packages = mkOption {
      type = types.listOf types.package;
      default = with pkgs; [ kubernetes etcd kubernetes-helm keepalived kubectl nftables iproute2 containerd runc ];
      defaultText = lib.literalExpression "with pkgs; [ kubernetes etcd kubernetes-helm keepalived kubectl nftables iproute2 containerd runc ]";
      description = "Kubernetes binaries (from the host's nixpkgs pin) installed and put on the units' PATH; containerd must be 2.0 or later for Kubernetes 1.36 and later.";
    };

    ciliumUnit = mkOption {
      type = types.str;
      default = "kcore-kubernetes-cilium";
      readOnly = true;
      description = "The oneshot that runs `helm upgrade --install` of Cilium's chart (primary cluster only).";
    };

    ciliumChart = mkOption {
      type = types.nullOr types.path;
      default = null;
      example = lib.literalExpression ''pkgs.fetchzip { url = "https://helm.cilium.io/cilium-1.20.2.tgz"; hash = "…"; }'';
      description = "Cilium's Helm chart (an unpacked chart directory), linked at /usr/share/kcore/charts/cilium where the Cilium oneshot installs it from; needed on the bootstrap control plane of a cluster with cni: cilium.";
    };

    provisionerUnit = mkOption {
      type = types.str;
      default = "kcore-kubernetes-provisioner";
      readOnly = true;
      description = "The oneshot that applies /etc/kubernetes/provisioner.yaml.";
    };

    keepalivedInstance = mkOption {
      type = types.str;
      default = "kcore_api";
      readOnly = true;
      description = "The VRRP instance holding the API VIP (BACKUP, nopreempt, router id 40).";
    };

    openVrrp = mkOption {
      type = types.bool;
      default = true;
      description = "Accept VRRP (IP protocol 112) in the NixOS firewall, for the API VIP.";
    };
  };

  config = mkIf cfg.enable {
    assertions = [{
      assertion = !config.virtualisation.containerd.enable;
      message = "services.kcore.kubernetes runs containerd itself (kcore-containerd, configured by kcore); disable virtualisation.containerd.";
    }];
    environment.systemPackages = cfg.packages;
    # containerd looks for CNI plugins in /opt/cni/bin (Cilium installs there)
    # and /usr/lib/cni (the bridge plugin of bridge-CNI clusters).
    systemd.tmpfiles.rules = [ "L+ /usr/lib/cni - - - - ${pkgs.cni-plugins}/bin" ]
      ++ lib.optional (cfg.ciliumChart != null) "L+ /usr/share/kcore/charts/cilium - - - - ${cfg.ciliumChart}";
    systemd.services = lib.listToAttrs (map mkUnit units);
    boot.kernelModules = [ "br_netfilter" "overlay" ];
    boot.kernel.sysctl = {
      "net.ipv4.ip_forward" = 1;
      "net.bridge.bridge-nf-call-iptables" = 1;
    };
    networking.firewall.extraInputRules = mkIf (cfg.openVrrp && config.networking.nftables.enable) "ip protocol vrrp accept";
    networking.firewall.extraCommands = mkIf (cfg.openVrrp && !config.networking.nftables.enable)
      "iptables -A nixos-fw -p vrrp -j nixos-fw-accept";
  };
}
