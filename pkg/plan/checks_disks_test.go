package plan

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

const fastDisk = "/dev/disk/by-id/nvme-SAMSUNG_MZ_S1"

// diskCluster is the lab cluster with a whole-disk volume "fast" on node-107.
func diskCluster() *api.KubernetesCluster {
	return with(labCluster(), func(c *api.KubernetesCluster) {
		c.Spec.LocalProvisioner.Volumes = append(c.Spec.LocalProvisioner.Volumes, api.VolumeSpec{
			Name: "fast", NodeID: "node-107", StorageClass: api.StorageClassDisk, Disk: fastDisk,
			FSType: api.FSTypeXFS, Role: api.VolumeRoleFilesystem, MountPath: "/mnt/kcore/lab/fast",
		})
	})
}

// diskNodes are the lab nodes with node-107 reporting disk d as fast's disk.
func diskNodes(edit func(*api.Disk)) []*api.Node {
	nodes := labNodes()
	d := api.Disk{ID: "nvme-SAMSUNG_MZ_S1", Path: "/dev/nvme1n1", SizeBytes: 1 << 40, Probed: true}
	if edit != nil {
		edit(&d)
	}
	find(nodes, "node-107").Facts.Disks = []api.Disk{d, {ID: "ata-OTHER", Path: "/dev/sda", Probed: true}}
	return nodes
}

func TestDiskIssues(t *testing.T) {
	fastLabel := api.VolumeLabel(api.VolumeName("lab", "node-107", "fast"))
	tests := []struct {
		name   string
		stored bool
		nodes  []*api.Node
		want   string // the blocking code; "" for none
		text   string
	}{
		{name: "empty disk", nodes: diskNodes(nil)},
		{name: "kcore's own filesystem, mounted at the volume", nodes: diskNodes(func(d *api.Disk) {
			d.FSType, d.Label, d.UUID, d.MountPoints = "xfs", fastLabel, "u1", []string{"/mnt/kcore/lab/fast"}
		})},
		{name: "missing", nodes: labNodes(), want: CodeDiskMissing, text: "node-107 reports no disk " + fastDisk + " (it has none)"},
		{name: "missing among others", nodes: diskNodes(func(d *api.Disk) { d.ID = "nvme-OTHER" }), want: CodeDiskMissing, text: "(it has nvme-OTHER, ata-OTHER)"},
		{name: "mounted elsewhere", nodes: diskNodes(func(d *api.Disk) { d.FSType, d.MountPoints = "ext4", []string{"/srv"} }),
			want: CodeDiskInUse, text: "is in use: mounted at /srv"},
		{name: "partitioned", nodes: diskNodes(func(d *api.Disk) { d.Partitions = []string{"nvme1n1p1"} }), want: CodeDiskInUse, text: "partitions nvme1n1p1"},
		{name: "held by device-mapper", nodes: diskNodes(func(d *api.Disk) { d.FSType, d.Holders = "LVM2_member", []string{"dm-0"} }),
			want: CodeDiskInUse, text: "held by dm-0"},
		{name: "foreign filesystem", nodes: diskNodes(func(d *api.Disk) { d.FSType, d.Label = "ext4", "photos" }),
			want: CodeDiskForeignData, text: `holds an ext4 filesystem labelled "photos"; kcore formats only an empty disk`},
		{name: "kcore's label on another filesystem type", nodes: diskNodes(func(d *api.Disk) { d.FSType, d.Label = "ext4", fastLabel }),
			want: CodeDiskForeignData},
		{name: "partition table", nodes: diskNodes(func(d *api.Disk) { d.PartitionTable = "gpt" }), want: CodeDiskForeignData, text: "a gpt partition table"},
		{name: "not probed", nodes: diskNodes(func(d *api.Disk) { d.Probed = false }), want: CodeDiskForeignData, text: "could not probe"},
		{name: "a stored disk volume is not checked again", stored: true, nodes: labNodes()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := diskCluster()
			c.Spec.ClusterDNS = "10.96.0.53" // an update has something to change
			in := Input{Desired: clusters(c), Nodes: tt.nodes}
			if tt.stored {
				in.Stored = clusters(stored(diskCluster(), api.PhaseReady))
			}
			p := Compute(in)
			got := codes(p.Blocking)
			if tt.want == "" && len(got) > 0 {
				t.Fatalf("blocking = %+v, want none", p.Blocking)
			}
			if tt.want != "" && !slices.Equal(got, []string{tt.want}) {
				t.Fatalf("blocking = %v, want [%s]", got, tt.want)
			}
			for _, i := range p.Blocking {
				if i.Path != "spec.localProvisioner.volumes[3].disk" || i.Fix == "" || !strings.Contains(i.Message, tt.text) {
					t.Fatalf("issue %+v, want path spec.localProvisioner.volumes[3].disk, a fix and %q", i, tt.text)
				}
			}
		})
	}
}

// TestDiskVolumeSteps derives the disk's create from the render diff, and
// keeps its data when the volume leaves the manifest.
func TestDiskVolumeSteps(t *testing.T) {
	const vol = "k8s-lab-node-107-fast"
	change := func(p *Plan) string {
		for _, s := range p.Clusters[0].Steps {
			for _, c := range s.Changes {
				if c.Kind == KindVolume && c.Name == vol {
					return s.Node + " " + s.Action + " " + c.Change
				}
			}
		}
		return ""
	}
	p := Compute(Input{Desired: clusters(diskCluster()), Nodes: diskNodes(nil)})
	if got := change(p); got != "node-107 create create" || len(p.Blocking) > 0 {
		t.Fatalf("create: %q, blocking %v", got, codes(p.Blocking))
	}
	p = Compute(Input{Desired: clusters(labCluster()), Stored: clusters(stored(diskCluster(), api.PhaseReady)), Nodes: diskNodes(nil)})
	if got := change(p); !strings.HasSuffix(got, " keep") {
		t.Fatalf("a disk volume removed from the manifest: %q", got)
	}
}
