//go:build !linux

package tasks

// hostCaps: other hosts have no Linux capabilities; root has them all.
func hostCaps(c *cred) {
	if c.euid == 0 {
		c.capEff, c.capPrm = capFull, capFull
	}
}
