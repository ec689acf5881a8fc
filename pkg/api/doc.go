// Package api holds kcore's object model: KubernetesCluster, ClusterUpdate and
// Node, their defaults and their validation with field paths.
//
// The package is pure: no I/O, no clock, no randomness. Readers in pkg/manifest
// turn files into these types and attach file:line positions to the field paths
// that Validate reports.
package api
