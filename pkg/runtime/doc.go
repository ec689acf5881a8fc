// Package runtime runs the units of a NodeState behind one interface,
// Runtime, with three backends:
//
//   - Supervisor: a process supervisor built into the agent (start, restart
//     with capped exponential backoff, per-unit log files, process-group stop,
//     a state file so a restarted agent adopts its running processes instead
//     of starting them twice);
//   - Systemd: unit files under /etc/systemd/system and systemctl through the
//     exec runner;
//   - NixOS: the node's units as JSON in /etc/kcore/node-state.json for the
//     kcore NixOS module, activated with nixos-rebuild switch.
//
// Every backend restarts a unit only when its InputHash changed; Reload
// sends a running unit SIGHUP (the agent reloads a unit whose ReloadHash
// alone changed).
package runtime
