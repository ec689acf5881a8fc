// Package cli builds the command trees of kctl, kcore-controller and
// kcore-node-agent. Every command gets its input and outputs from Streams, so
// tests run the real commands against buffers; nothing here reads globals.
package cli
