package tasks

import "golang.org/x/sys/unix"

// hostCaps reads the capability sets and bounding set uvm itself runs
// with, the non-deterministic guest's initial ones (a container's root
// usually lacks some capabilities, and the guest must see the same).
func hostCaps(c *cred) {
	h := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var d [2]unix.CapUserData
	if unix.Capget(&h, &d[0]) == nil {
		c.capEff = uint64(d[0].Effective) | uint64(d[1].Effective)<<32
		c.capPrm = uint64(d[0].Permitted) | uint64(d[1].Permitted)<<32
		c.capInh = uint64(d[0].Inheritable) | uint64(d[1].Inheritable)<<32
	}
	c.capBnd = 0
	for i := 0; i <= capLastCap; i++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(i), 0, 0, 0); err == nil && r == 1 {
			c.capBnd |= 1 << i
		}
	}
	c.capEff &= capFull
	c.capPrm &= capFull
	c.capInh &= capFull
}
