// Package volume creates, grows, formats and mounts the local volumes of a
// NodeState: LVM logical volumes and thin pools, ZFS zvols, ext4 and xfs
// filesystems. Every command goes through an execrun.Runner. It never shrinks
// a volume (ErrShrink), never formats a device that already holds a
// filesystem, and deletes only volumes its ownership record says it created
// (ErrNotOwned). It also reads the storage facts (volume groups, pools).
package volume
