// Package netlimit bounds how many connections a listener holds: in total
// and per source address. A connection past either bound is closed as soon
// as it is accepted, so a flood of idle connections costs the process a
// bounded number of file descriptors and the connections already held
// (peers, clients) keep working.
package netlimit
