// Package keepalived tests the keepalived configuration kcore renders with
// the real keepalived (apt package keepalived), in network namespaces on a
// bridge the test creates and removes: the VIP lands on exactly one control
// plane, moves when that keepalived stops, and moves when its API health
// check fails; and when the peers change on every control plane at once
// (a replace), the agents reload keepalived and the VIP stays held
// throughout. It needs root and skips loudly otherwise.
package keepalived
