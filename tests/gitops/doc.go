// Package gitops tests the git-following loop end to end: three in-process
// replicas with their HTTPS API and the loop on the leader, following a
// real git repository that the tests commit to with the git binary.
package gitops
