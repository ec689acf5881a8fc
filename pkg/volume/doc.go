// Package volume creates, grows, formats and mounts the local volumes of a
// NodeState: LVM logical volumes and thin pools, ZFS zvols, whole raw disks
// named by /dev/disk/by-id, ext4 and xfs filesystems. Every command goes
// through an execrun.Runner. It never shrinks a volume (ErrShrink), never
// formats a device that already holds a filesystem, formats a disk only
// when blkid finds it empty and adopts one only when it holds kcore's own
// filesystem for that volume (ErrForeignData otherwise), and deletes or
// wipes only volumes its ownership record says it created (ErrNotOwned).
// It also reads the storage facts (volume groups, pools, disk signatures).
package volume
