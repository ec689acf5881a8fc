# kcore controller: one replica of the Raft-replicated controller.
{ config, lib, pkgs, ... }:

let
  cfg = config.services.kcore.controller;
  inherit (lib) mkEnableOption mkIf mkOption optionals types;

  port = addr: lib.toInt (lib.last (lib.splitString ":" addr));

  args =
    [ "${cfg.package}/bin/kcore-controller"
      "--data-dir" cfg.dataDir
      "--pki-dir" (toString cfg.pkiDir)
      "--listen" cfg.listen
      "--log-level" cfg.logLevel
    ]
    ++ optionals (cfg.advertise != null) [ "--advertise" cfg.advertise ]
    ++ optionals (cfg.raftListen != null) [ "--raft-listen" cfg.raftListen ]
    ++ optionals (cfg.id != null) [ "--id" cfg.id ]
    ++ optionals (cfg.encryptionKeyFile != null) [ "--encryption-key" (toString cfg.encryptionKeyFile) ]
    ++ optionals cfg.bootstrap [ "--bootstrap" ]
    ++ lib.concatMap (j: [ "--join" j ]) cfg.join;
in
{
  options.services.kcore.controller = {
    enable = mkEnableOption "a kcore controller replica";

    package = mkOption {
      type = types.package;
      description = "The kcore package providing bin/kcore-controller.";
    };

    listen = mkOption {
      type = types.str;
      example = "10.0.0.1:7443";
      description = "HTTPS API listen address; Raft listens on the next port unless raftListen is set.";
    };

    advertise = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = "API address other replicas and clients use (default: listen).";
    };

    raftListen = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = "Raft listen address (default: listen host, port + 1).";
    };

    id = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = "This replica's Raft id (default: the advertise address).";
    };

    dataDir = mkOption {
      type = types.str;
      default = "/var/lib/kcore-controller";
      description = "Raft log, stable store and snapshots.";
    };

    pkiDir = mkOption {
      type = types.path;
      description = "Directory with ca.crt, ca.key, server.crt, server.key (from `kctl controller init`); keep it out of the Nix store.";
    };

    encryptionKeyFile = mkOption {
      type = types.nullOr types.path;
      default = null;
      description = "32-byte secrets key (default: pkiDir/encryption.key).";
    };

    bootstrap = mkOption {
      type = types.bool;
      default = false;
      description = "Form a new cluster with this replica as its first voter (empty data dir only).";
    };

    join = mkOption {
      type = types.listOf types.str;
      default = [ ];
      description = "API addresses of existing replicas to join through.";
    };

    openFirewall = mkOption {
      type = types.bool;
      default = false;
      description = "Open the API and Raft ports.";
    };

    logLevel = mkOption {
      type = types.enum [ "debug" "info" "warn" "error" ];
      default = "info";
      description = "Log level.";
    };
  };

  config = mkIf cfg.enable {
    assertions = [{
      assertion = !(cfg.bootstrap && cfg.join != [ ]);
      message = "services.kcore.controller: bootstrap and join exclude each other";
    }];
    systemd.services.kcore-controller = {
      description = "kcore controller";
      wantedBy = [ "multi-user.target" ];
      wants = [ "network-online.target" ];
      after = [ "network-online.target" ];
      serviceConfig = {
        ExecStart = lib.escapeShellArgs args;
        Restart = "always";
        RestartSec = 2;
        StateDirectory = lib.removePrefix "/var/lib/" cfg.dataDir;
        StateDirectoryMode = "0700";
      };
    };
    networking.firewall.allowedTCPPorts = mkIf cfg.openFirewall [ (port cfg.listen) (port cfg.listen + 1) ];
  };
}
