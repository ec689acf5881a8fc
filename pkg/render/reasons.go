package render

import (
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// The Reason of every rendered item says in a few words what the item is,
// with the values a person checks (SANs, addresses, sizes). Plans print it
// next to each file, unit, task and volume that changes; it is not part of
// the NodeState agents receive or of any hash.

// keepalivedReason describes a control plane's VRRP instance.
func (r *renderer) keepalivedReason(m api.ClusterNode) string {
	ha := r.c.Spec.HighAvailability
	var peers []string
	for _, n := range r.c.Spec.ControlPlaneNodes {
		if n.NodeID != m.NodeID {
			peers = append(peers, n.AdvertiseAddress)
		}
	}
	check := "no API check"
	if ha.HealthCheckEnabled() {
		check = "/readyz check"
	}
	return fmt.Sprintf("keepalived instance %s: VIP %s/24 on %s, priority %d, unicast peers %s, %s",
		r.l.VRRPInstance, ha.VIPAddress, ha.VIPInterface, Priority(m.AdvertiseAddress), orNone(strings.Join(peers, ", ")), check)
}

// volumeReason describes a volume the agent ensures.
func volumeReason(op api.VolumeOp) string {
	kind := "LVM logical volume"
	switch {
	case op.Role == api.VolumeRolePool:
		return fmt.Sprintf("LVM thin pool %s, %s; not mounted", op.Device, bytesString(op.SizeBytes))
	case op.Class == api.StorageClassZFS:
		kind = "ZFS zvol"
	case op.Class == api.StorageClassDisk:
		kind = "whole disk"
		if op.SizeBytes == 0 {
			return fmt.Sprintf("%s %s (not reported by the node), %s at %s", kind, op.Device, op.FSType, op.MountPath)
		}
	}
	return fmt.Sprintf("%s %s, %s, %s at %s", kind, op.Device, bytesString(op.SizeBytes), op.FSType, op.MountPath)
}

// bytesString is a size in GiB when whole, else in bytes.
func bytesString(n int64) string {
	const gib = 1 << 30
	if n > 0 && n%gib == 0 {
		return strconv.FormatInt(n/gib, 10) + " GiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// nodePathsString lists the provisioner's paths as node:path.
func nodePathsString(paths []manifests.NodePaths) string {
	var out []string
	for _, np := range paths {
		for _, p := range np.Paths {
			out = append(out, np.Node+":"+p)
		}
	}
	return orNone(strings.Join(out, ", "))
}

// certReason describes a certificate file from what pki issues into it.
func (r *renderer) certReason(what, name string) string {
	d, ok := r.certs[name]
	if !ok {
		return what
	}
	s := what + ", " + d.Subject()
	if sans := d.SANs(); sans != "" {
		s += ", SANs " + sans
	}
	return s
}

// kubeconfigReason describes a kubeconfig: who it authenticates as and where it points.
func kubeconfigReason(what, user, server string) string {
	return fmt.Sprintf("%s kubeconfig, user %s, server %s", what, user, server)
}

// describeCerts indexes what pki issues for the cluster by slot name.
func describeCerts(c *api.KubernetesCluster) (map[string]pki.IssuedCert, error) {
	list, err := pki.Describe(c)
	if err != nil {
		return nil, fmt.Errorf("render: describe certificates: %w: %w", err, ErrInvalid)
	}
	out := make(map[string]pki.IssuedCert, len(list))
	for _, d := range list {
		out[d.Name] = d
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
