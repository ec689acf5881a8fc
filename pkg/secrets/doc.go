// Package secrets seals and opens the controller's secret material with
// AES-256-GCM under a 32-byte key file, binding each value to the object
// (kind, name) it belongs to. It implements store.Sealer, so secrets reach the
// raft log, the FSM and snapshots only as ciphertext.
package secrets
