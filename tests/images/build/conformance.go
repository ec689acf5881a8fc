package main

import v1 "github.com/google/go-containerregistry/pkg/v1"

// debianBase is the Debian root filesystem the conformance images that need
// a shell and network tools are built on: scripts/build-images.sh makes it
// with mmdebstrap (bookworm, minbase) including bind9-dnsutils, curl,
// netcat-openbsd, iproute2, socat and nginx-light.
const debianBase = "debian"

// conformanceRecipes returns one recipe per image the upstream conformance
// tests of the DNS, Services, Pods, ConfigMap, Secret and EmptyDir suites
// pull (e2e.test --list-images names them), following each upstream
// Dockerfile under test/images and build/pause: agnhost (ENTRYPOINT
// /agnhost, CMD pause, /uploads, on a root filesystem with dig, curl, nc, ip
// and socat; upstream's is Alpine's, this one Debian's), busybox (applets in
// /bin, CMD sh; its sh is Debian's bash-static: busybox 1.35's ash drops
// environment variables whose names are not shell identifiers, which
// upstream's busybox 1.37 passes on and the ConfigMap and Secret tests
// read), glibc-dns-testing (Debian with dig), nginx (Debian's
// nginx-light in the foreground) and pause (USER 65535, ENTRYPOINT /pause).
func conformanceRecipes() []recipe {
	agnhost := v1.Config{
		Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}, Env: []string{pathEnv},
		ExposedPorts: map[string]struct{}{"80/tcp": {}, "8080/tcp": {}, "8081/tcp": {}, "9376/tcp": {}, "5000/tcp": {}},
	}
	return []recipe{
		{Const: "AgnhostImage", Name: "agnhost", Path: "/agnhost", Base: debianBase, Dirs: []string{"/uploads"}, Config: agnhost},
		{Const: "AgnhostPrevImage", Name: "agnhost-prev", Path: "/agnhost", Base: debianBase, Dirs: []string{"/uploads"}, Config: agnhost},
		{
			Const: "BusyboxImage", Name: "busybox", Path: "/bin/busybox", Applets: true, Shell: "bash-static",
			Config: v1.Config{Cmd: []string{"sh"}, Env: []string{pathEnv}},
		},
		{
			Const: "GlibcDNSTestingImage", Name: "glibc-dns-testing", Base: debianBase,
			Config: v1.Config{Cmd: []string{"bash"}, Env: []string{pathEnv}},
		},
		{
			Const: "NginxImage", Name: "nginx", Base: debianBase,
			Config: v1.Config{
				Cmd: []string{"nginx", "-g", "daemon off;"}, Env: []string{pathEnv},
				ExposedPorts: map[string]struct{}{"80/tcp": {}},
			},
		},
		{
			Const: "PauseImage", Name: "pause", Path: "/pause",
			Config: v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535", Env: []string{pathEnv}},
		},
	}
}
