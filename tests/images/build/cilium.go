package main

import v1 "github.com/google/go-containerregistry/pkg/v1"

// ciliumBase is the Debian root filesystem the agent's image is built on:
// scripts/build-images.sh makes it with mmdebstrap (bookworm, minbase)
// including what upstream's cilium-runtime image holds for the agent
// (iproute2, iptables, ipset, kmod, ca-certificates) and clang-19 and
// llvm-19, which the agent compiles its datapath with.
const ciliumBase = "cilium"

// ciliumRelease is the directory under -bin-dir that holds the Cilium
// release scripts/build-cilium.sh built: its commands, bpf/ and scripts/.
const ciliumRelease = "cilium-release"

// llvmPathEnv puts Debian's LLVM 19 first on PATH: the agent runs clang
// and llc by name, and Debian installs the versioned toolchain's clang and
// llc under /usr/lib/llvm-19/bin (its /usr/bin has only clang-19, llc-19).
const llvmPathEnv = "PATH=/usr/lib/llvm-19/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ciliumRecipes returns the recipes of the images Cilium's chart runs,
// following upstream's images/cilium and images/operator Dockerfiles: the
// agent's commands in /usr/bin, the CNI plugin in /opt/cni/bin, the init
// and CNI scripts in /, the datapath's C sources in /var/lib/cilium/bpf,
// CMD cilium-dbg, WORKDIR /home/cilium; the generic operator alone with
// the CA bundle. Left out: Envoy (not a Go program; the lab's clusters run
// with the L7 proxy off), hubble, bugtool and gops.
func ciliumRecipes() []recipe {
	files := map[string]string{
		"/opt/cni/bin/cilium-cni":          ciliumRelease + "/cilium-cni",
		"/init-container.sh":               ciliumRelease + "/scripts/init-container.sh",
		"/install-plugin.sh":               ciliumRelease + "/scripts/install-plugin.sh",
		"/cni-uninstall.sh":                ciliumRelease + "/scripts/cni-uninstall.sh",
		"/var/lib/cilium/bpf":              ciliumRelease + "/bpf",
		"/usr/bin/cilium-dbg":              ciliumRelease + "/cilium-dbg",
		"/usr/bin/cilium-health":           ciliumRelease + "/cilium-health",
		"/usr/bin/cilium-mount":            ciliumRelease + "/cilium-mount",
		"/usr/bin/cilium-sysctlfix":        ciliumRelease + "/cilium-sysctlfix",
		"/usr/bin/cilium-health-responder": ciliumRelease + "/cilium-health-responder",
	}
	return []recipe{
		{
			Const: "AgentImage", Name: "cilium", Path: "/usr/bin/cilium-agent", Base: ciliumBase,
			Files: files, Dirs: []string{"/home/cilium"},
			Config: v1.Config{
				Cmd: []string{"/usr/bin/cilium-dbg"}, WorkingDir: "/home/cilium",
				Env: []string{llvmPathEnv, "HUBBLE_SERVER=unix:///var/run/cilium/hubble.sock", "INITSYSTEM=SYSTEMD"},
			},
		},
		{
			Const: "OperatorGenericImage", Name: "operator-generic", Path: "/usr/bin/cilium-operator-generic", CACerts: true,
			Dirs:   []string{"/home/gops"},
			Config: v1.Config{WorkingDir: "/", Env: []string{pathEnv, "GOPS_CONFIG_DIR=/home/gops"}},
		},
	}
}
