package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// containerd's paths on the node.
const (
	ContainerdConfigPath = "/etc/containerd/config.toml"
	// ContainerdCertsDir holds one directory per mirrored registry
	// (hosts.toml, ca.crt); containerd re-reads it on every pull.
	ContainerdCertsDir = "/etc/containerd/certs.d"
	ContainerdRootDir  = "/var/lib/containerd"
	ContainerdStateDir = "/run/containerd"
	// CNIConfDir is where kubelet's pods find their network configuration
	// (the bridge CNI conflist, or Cilium's).
	CNIConfDir = "/etc/cni/net.d"
)

// CNIBinDirs are the directories containerd looks for CNI plugins in, in
// order: the upstream location (Cilium installs its plugin there) and
// Debian's containernetworking-plugins.
func CNIBinDirs() []string { return []string{"/opt/cni/bin", "/usr/lib/cni"} }

// ContainerdHostsPath is the hosts.toml of one mirrored registry.
func ContainerdHostsPath(registry string) string {
	return path.Join(ContainerdCertsDir, registry, "hosts.toml")
}

// ContainerdCAPath is the CA bundle of one mirrored registry's endpoints.
func ContainerdCAPath(registry string) string {
	return path.Join(ContainerdCertsDir, registry, "ca.crt")
}

// containerd renders the node's container runtime: its configuration, one
// hosts.toml (and ca.crt) per registry mirror and the kcore-containerd
// unit. The unit's hash covers config.toml only: containerd reads
// certs.d on each pull, so a mirror change restarts nothing.
func (r *renderer) containerd(b *builder) error {
	socket, ok := strings.CutPrefix(r.opts.ContainerRuntimeEndpoint, "unix://")
	if !ok || !path.IsAbs(socket) {
		return fmt.Errorf("render containerd: container runtime endpoint %q is not unix:///<path>: %w", r.opts.ContainerRuntimeEndpoint, ErrInvalid)
	}
	systemdCgroup := r.opts.CgroupDriver == "systemd" && r.opts.Profile != ProfileLab
	lab := r.opts.Profile == ProfileLab
	reason := fmt.Sprintf("containerd configuration: CRI on %s, sandbox image %s, SystemdCgroup %t, registry hosts in %s",
		socket, manifests.PauseImage, systemdCgroup, ContainerdCertsDir)
	if lab {
		reason += ", pods' oom_score_adj never below containerd's own and their network namespaces under its state directory (lab profile)"
	}
	b.file(ContainerdConfigPath, modeConfig, r.containerdConfig(socket, systemdCgroup, lab), false, reason)
	for _, m := range r.c.Spec.RegistryMirrors {
		reason := "registry mirrors of " + m.Registry + ": " + strings.Join(m.Endpoints, ", ")
		if m.CAPEM != "" {
			b.file(ContainerdCAPath(m.Registry), modeConfig, m.CAPEM, false, "CA bundle of the "+m.Registry+" mirrors")
		}
		b.file(ContainerdHostsPath(m.Registry), modeConfig, r.containerdHosts(m), false, reason)
	}
	b.unit(api.Unit{
		Name:    UnitContainerd,
		Reason:  "containerd serving the CRI on " + socket,
		Argv:    []string{"containerd", "--config", ContainerdConfigPath},
		Restart: api.RestartAlways,
		// Restarting containerd (a new config) must not end the pods.
		KillMode: api.KillModeProcess,
		// Removing containerd for good removes its pods first.
		CRIEndpoint: r.opts.ContainerRuntimeEndpoint,
	}, []string{ContainerdConfigPath})
	return nil
}

// containerdConfig is config.toml in containerd 2's version 3 format, which
// every containerd 2 release reads (2.4 migrates it to its version 4 in
// memory, with a warning and nothing to change: the migration only moves
// containerd 1's CRI settings, of which this file has none).
//
// lab adds the lab profile's settings: restrict_oom_score_adj (a host
// without CAP_SYS_RESOURCE cannot lower a pod's oom_score_adj) and
// netns_mounts_under_state_dir (pods' network namespaces under the node's
// own state directory instead of the machine's /var/run/netns, so removing
// a lab node removes them).
func (r *renderer) containerdConfig(socket string, systemdCgroup, lab bool) string {
	var w strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	line("# containerd configuration rendered by kcore for cluster %s.", r.c.Metadata.Name)
	line("version = 3")
	line("root = %s", tomlString(ContainerdRootDir))
	line("state = %s", tomlString(ContainerdStateDir))
	line("")
	line("[grpc]")
	line("  address = %s", tomlString(socket))
	line("")
	line("[plugins]")
	line("  [plugins.'io.containerd.cri.v1.images']")
	line("    [plugins.'io.containerd.cri.v1.images'.pinned_images]")
	line("      sandbox = %s", tomlString(manifests.PauseImage))
	line("    [plugins.'io.containerd.cri.v1.images'.registry]")
	line("      config_path = %s", tomlString(ContainerdCertsDir))
	line("  [plugins.'io.containerd.cri.v1.runtime']")
	if lab {
		line("    restrict_oom_score_adj = true")
		line("    netns_mounts_under_state_dir = true")
	}
	line("    [plugins.'io.containerd.cri.v1.runtime'.cni]")
	line("      bin_dirs = [%s]", tomlStrings(CNIBinDirs()))
	line("      conf_dir = %s", tomlString(CNIConfDir))
	line("    [plugins.'io.containerd.cri.v1.runtime'.containerd]")
	line("      default_runtime_name = 'runc'")
	line("      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]")
	line("        runtime_type = 'io.containerd.runc.v2'")
	line("        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]")
	line("          SystemdCgroup = %t", systemdCgroup)
	line("  # Binaries installed with `ctr install` stay under containerd's root.")
	line("  [plugins.'io.containerd.internal.v1.opt']")
	line("    path = %s", tomlString(path.Join(ContainerdRootDir, "opt")))
	line("  # kcore installs no NRI plugins; its socket would be one per host.")
	line("  [plugins.'io.containerd.nri.v1.nri']")
	line("    disable = true")
	return w.String()
}

// containerdHosts is the hosts.toml of one registry: its mirrors in order,
// pull and resolve only, then the upstream server as the fallback.
func (r *renderer) containerdHosts(m api.RegistryMirror) string {
	var w strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&w, format+"\n", args...) }
	line("# Registry mirrors of %s rendered by kcore for cluster %s; containerd reads this file on each pull.", m.Registry, r.c.Metadata.Name)
	line("server = %s", tomlString(upstreamServer(m.Registry)))
	for _, e := range m.Endpoints {
		line("")
		line("[host.%s]", tomlString(strings.TrimSuffix(e, "/")))
		line("  capabilities = [%s]", tomlStrings([]string{"pull", "resolve"}))
		if m.CAPEM != "" && strings.HasPrefix(e, "https://") {
			line("  ca = %s", tomlString(ContainerdCAPath(m.Registry)))
		}
	}
	return w.String()
}

// upstreamServer is the registry's own API endpoint: Docker Hub serves
// docker.io from registry-1.docker.io, every other registry from its host.
func upstreamServer(registry string) string {
	if registry == "docker.io" {
		return "https://registry-1.docker.io"
	}
	return "https://" + registry
}

// tomlString quotes s as a TOML basic string (its escapes are JSON's, which
// strconv.Quote matches for the characters validation lets through).
func tomlString(s string) string { return strconv.Quote(s) }

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return strings.Join(q, ", ")
}
