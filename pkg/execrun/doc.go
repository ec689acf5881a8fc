// Package execrun is kcore's one way to run a command: an argv (never a
// shell), a timeout per call, controlled environment and captured output.
// Everything the node agent runs on the host (systemctl, lvcreate, mkfs,
// arping, …) goes through a Runner, so tests swap in a Recorder that records
// each argv and returns scripted results.
package execrun
