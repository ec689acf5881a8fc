package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// diskVolume is where the lab's manifest mounts each node's raw disk (a loop
// device scripts/lab.sh links as /dev/disk/by-id/kcore-lab-disk-nN).
const diskVolume = "/mnt/kcore/lab/data"

// diskMarker is the file testDiskVolumes writes on each volume, to find
// after the cluster is deleted.
const diskMarker = "kcore-e2e-marker"

// diskMount is the source device and filesystem mounted at node n's volume.
func (l *lab) diskMount(n labNode) (string, string, error) {
	out, err := run(10*time.Second, nil, "findmnt", "-n", "-J", "-o", "SOURCE,FSTYPE", "--mountpoint", filepath.Join(l.dir, n.name, diskVolume))
	if err != nil {
		return "", "", err
	}
	var fm struct {
		Filesystems []struct {
			Source string `json:"source"`
			FSType string `json:"fstype"`
		} `json:"filesystems"`
	}
	if err := json.Unmarshal([]byte(out), &fm); err != nil || len(fm.Filesystems) != 1 {
		return "", "", fmt.Errorf("findmnt at %s: %q (%v)", diskVolume, out, err)
	}
	return fm.Filesystems[0].Source, fm.Filesystems[0].FSType, nil
}

// testDiskVolumes: every node's raw disk was formatted xfs and mounted at
// its volume, the device its by-id link names, and the local-path
// provisioner's ConfigMap lists every node's volume as its path.
func testDiskVolumes(t *testing.T, l *lab) {
	for _, n := range labNodes() {
		link := filepath.Join(l.dir, n.name, "dev/disk/by-id", "kcore-lab-disk-"+n.name)
		dev, err := os.Readlink(link)
		if err != nil {
			t.Fatalf("%s: the lab's disk link: %v", n.id, err)
		}
		eventually(t, n.id+"'s disk mounted at "+diskVolume, time.Minute, func() error {
			src, fs, err := l.diskMount(n)
			if err != nil {
				return err
			}
			if src != dev || fs != "xfs" {
				return fmt.Errorf("%s is %s (%s), want %s (xfs)", diskVolume, src, fs, dev)
			}
			return nil
		})
		if err := os.WriteFile(filepath.Join(l.dir, n.name, diskVolume, diskMarker), []byte(n.id), 0o600); err != nil {
			t.Fatalf("%s: write on the volume: %v", n.id, err)
		}
	}
	eventually(t, "the local-path ConfigMap names every node's volume", 2*time.Minute, func() error {
		out, err := l.kubectl("-n", "local-path-storage", "get", "configmap", "local-path-config", "-o", "jsonpath={.data.config\\.json}")
		if err != nil {
			return err
		}
		var cfg struct {
			NodePathMap []struct {
				Node  string   `json:"node"`
				Paths []string `json:"paths"`
			} `json:"nodePathMap"`
		}
		if err := json.Unmarshal([]byte(out), &cfg); err != nil {
			return fmt.Errorf("decode config.json: %w\n%s", err, out)
		}
		got := map[string]string{}
		for _, np := range cfg.NodePathMap {
			got[np.Node] = strings.Join(np.Paths, ",")
		}
		// Under each agent's root: kubelet resolves the provisioner's
		// hostPath volumes on the machine the three nodes share.
		for _, n := range labNodes() {
			if want := filepath.Join(l.dir, n.name, diskVolume); got[n.id] != want {
				return fmt.Errorf("nodePathMap %v: %s has %q, want %s", cfg.NodePathMap, n.id, got[n.id], want)
			}
		}
		return nil
	})
}

// testDiskVolumesKept: a delete without --purge-volumes keeps every disk
// mounted with its data.
func testDiskVolumesKept(t *testing.T, l *lab) {
	for _, n := range labNodes() {
		if _, fs, err := l.diskMount(n); err != nil || fs != "xfs" {
			t.Errorf("%s: after delete %s is %q (%v), want the xfs volume kept", n.id, diskVolume, fs, err)
		}
		if got, err := os.ReadFile(filepath.Join(l.dir, n.name, diskVolume, diskMarker)); err != nil || string(got) != n.id {
			t.Errorf("%s: after delete the volume holds %q (%v)", n.id, got, err)
		}
	}
}
