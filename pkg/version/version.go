// Package version holds the build's version, stamped by the Makefile through
// -ldflags, and the controller schema version this build reads and writes.
package version

// Version is the kcore release, set with -ldflags -X at build time.
var Version = "dev"

// Schema is the newest controller log and snapshot schema this build reads
// and writes. A replica refuses log entries and snapshots with a newer
// schema and reads every older one. Schema 2 added client request ids to
// commands and the request-id table to snapshots. Schema 3 writes log
// entries in a binary form (a leading format byte, length-prefixed fields)
// instead of JSON; JSON entries of schemas 1 and 2 are still read.
//
// A cluster writes the lowest schema its members record (the cluster
// schema, see store.ClusterSchema): while a member still records schema 2
// this build writes schema 2 JSON entries and schema 2 snapshots, and it
// switches to Schema once every member records it.
const Schema = 3
