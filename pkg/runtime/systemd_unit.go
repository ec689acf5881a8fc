package runtime

import (
	"path/filepath"
	"sort"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// HashMarker starts the line of a kcore unit file that records its InputHash.
const HashMarker = "# kcore-input-hash: "

// SystemdUnitFile renders u as a systemd service. A bare argv[0] is made
// absolute under binDir (when set); the InputHash is recorded in a comment
// so the file changes exactly when the unit must restart.
func SystemdUnitFile(u api.Unit, binDir string) string {
	var b strings.Builder
	b.WriteString("# Managed by kcore-node-agent; changes are overwritten.\n")
	b.WriteString(HashMarker + u.InputHash + "\n")
	b.WriteString("[Unit]\n")
	b.WriteString("Description=kcore " + u.Name + "\n")
	b.WriteString("Wants=network-online.target\n")
	after := []string{"network-online.target"}
	for _, a := range u.After {
		after = append(after, a+".service")
	}
	b.WriteString("After=" + strings.Join(after, " ") + "\n")
	b.WriteString("\n[Service]\n")
	if u.Oneshot {
		b.WriteString("Type=oneshot\nRemainAfterExit=yes\n")
	} else {
		b.WriteString("Type=simple\n")
	}
	argv := append([]string{}, u.Argv...)
	if binDir != "" && !strings.Contains(argv[0], "/") {
		argv[0] = filepath.Join(binDir, argv[0])
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = systemdQuote(a)
	}
	if plainWord(argv[0]) {
		quoted[0] = argv[0]
	}
	b.WriteString("ExecStart=" + strings.Join(quoted, " ") + "\n")
	keys := make([]string, 0, len(u.Env))
	for k := range u.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString("Environment=" + systemdQuote(k+"="+u.Env[k]) + "\n")
	}
	policy := restartPolicy(u)
	if u.Oneshot && policy == api.RestartAlways {
		policy = api.RestartOnFailure // systemd refuses Restart=always for oneshots
	}
	b.WriteString("Restart=" + policy + "\n")
	if policy != api.RestartNever {
		b.WriteString("RestartSec=2\n")
	}
	killMode := "control-group"
	if u.KillMode == api.KillModeProcess {
		// Delegate: containerd manages the cgroups of the containers it starts.
		killMode = "process\nDelegate=yes"
	}
	b.WriteString("KillMode=" + killMode + "\nTimeoutStopSec=10\n")
	b.WriteString("\n[Install]\nWantedBy=multi-user.target\n")
	return b.String()
}

// systemdQuote quotes one word for ExecStart= and Environment=: double
// quotes, with backslash, quote, specifier (%) and variable ($) escaped.
func systemdQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$", "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// plainWord reports whether s needs no quoting at all.
func plainWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@", r)) {
			return false
		}
	}
	return s != ""
}

// unitHash reads the InputHash recorded in a unit file's content.
func unitHash(content string) string {
	for _, line := range strings.Split(content, "\n") {
		if h, ok := strings.CutPrefix(line, HashMarker); ok {
			return h
		}
	}
	return ""
}
