// Package cridrain stops and removes every pod sandbox a container runtime
// runs, through its CRI, before the node agent removes that runtime for
// good: the runtime's shims and containers outlive its own process, so
// without a drain a deleted cluster's pods would keep running. Only the
// node agent's binary links it (pkg/agent takes the drain as a function).
package cridrain
