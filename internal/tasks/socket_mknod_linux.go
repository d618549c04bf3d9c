package tasks

import "syscall"

// mknodSocketVFS creates the inode of a bound AF_UNIX socket at name in
// fsys: a socket node (unprivileged mknod may create one), so the guest's
// stat sees S_IFSOCK, with mode perm exactly (the host's umask does not
// narrow it; the guest's was applied).
func mknodSocketVFS(fsys vfs, name string, perm uint32) error {
	v, ok := fsys.(vfsCreds)
	if !ok {
		return syscall.EPERM
	}
	if v.readOnly() {
		return syscall.EROFS
	}
	return v.mknod(name, sIFSOCK|perm)
}
