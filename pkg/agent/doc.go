// Package agent is the node agent: it joins the controller with a token,
// renews its short-lived certificate at two thirds of its lifetime and swaps
// it in without restarting (CertSource), reports the machine's facts and
// heartbeats, long-polls the NodeStates
// rendered for this node and applies them idempotently — volumes, then files,
// then units, then tasks — reporting per-item status. A unit whose input
// hash changed is restarted; one whose reload hash alone changed is sent
// SIGHUP instead (reloadDue), which keepalived takes without giving up the
// VIP.
//
// Every rendered host path goes through Resolve, which keeps it inside an
// allow-list of kcore's directories and out of the agent's own directory
// (AgentDir); every file operation on it then runs beneath a confined
// handle on the root (pkg/confined), which follows no symlink. Decoded
// content is capped per file and per NodeState. Progress is kept in
// <root>/var/lib/kcore/agent-state.json, through a handle of its own, so a
// restarted agent neither re-runs finished tasks nor restarts running units.
//
// A NodeState that would write a path, start a unit or task, or ensure a
// volume another cluster's state on this node owns is refused whole
// (owners.go): two clusters on one machine never overwrite each other.
package agent
