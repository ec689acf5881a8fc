package controller

import (
	"log/slog"
	"syscall"

	"kcore.dev/kcore/pkg/server"
)

// fdReserve is how many file descriptors a replica needs besides the
// connections its listeners may hold: the raft log and snapshots, outgoing
// raft and forwarding connections, the orchestrator's clients.
const fdReserve = 256

// warnFDLimit logs a warning when the process's file descriptor limit is
// below what the connection caps may hold, since then a flood would run the
// process out of descriptors before the caps refuse anything.
func warnFDLimit(log *slog.Logger, api server.Limits, raft RaftLimits) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		log.Debug("read the file descriptor limit", "err", err)
		return
	}
	need := uint64(api.MaxConns) + uint64(raft.MaxConns) + fdReserve
	if lim.Cur < need {
		log.Warn("file descriptor limit below the connection caps: raise it (ulimit -n, LimitNOFILE) or lower --max-conns and --raft-max-conns",
			"limit", lim.Cur, "api_max_conns", api.MaxConns, "raft_max_conns", raft.MaxConns, "need", need)
	}
}
