// Package keepalived tests the keepalived configuration kcore renders with
// the real keepalived (apt package keepalived), in network namespaces on a
// bridge the test creates and removes: the VIP lands on exactly one control
// plane, moves when that keepalived stops, and moves when its API health
// check fails. It needs root and skips loudly otherwise.
package keepalived
