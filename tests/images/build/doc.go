// Command kcore-images writes the container images the kcore lab runs as OCI
// image archives, and pushes them into the lab's registry.
//
// The lab cannot pull from the internet, so every image its pods name is built
// on the machine from a static binary and a minimal root filesystem:
//
//	kcore-images refs  -images manifests/images.go
//	kcore-images build -images manifests/images.go -bin-dir DIR -out DIR
//	kcore-images push  -dir DIR -registry HOST:PORT -ca CA.pem
//
// refs prints, per image, its name and reference as manifests/images.go pins
// them (the one place the tags live; kcore's render reads the same constants).
// build writes DIR/<name>.oci.tar, an OCI image layout in a tar, its one
// image annotated with the full reference (org.opencontainers.image.ref.name
// and io.containerd.image.name), linux/amd64, its entrypoint, command, user
// and environment as the upstream image's Dockerfile sets them. push writes
// each image to HOST:PORT under its repository path without the registry
// host (registry.k8s.io/pause:3.10 goes to HOST:PORT/pause:3.10,
// docker.io/library/busybox:1.35.0 to HOST:PORT/library/busybox:1.35.0),
// which is where a containerd hosts.toml mirror for the original registry
// looks for it.
package main
