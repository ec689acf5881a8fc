// Package agent is the node agent: it joins the controller with a token,
// renews its short-lived certificate at two thirds of its lifetime and swaps
// it in without restarting (CertSource), reports the machine's facts and
// heartbeats, long-polls the NodeStates
// rendered for this node and applies them idempotently — volumes, then files,
// then units, then tasks — reporting per-item status.
//
// Every host path goes through Resolve, which keeps it under the agent's
// root and inside an allow-list of kcore's own directories. Progress is kept
// in <root>/var/lib/kcore/agent-state.json so a restarted agent neither
// re-runs finished tasks nor restarts running units.
package agent
