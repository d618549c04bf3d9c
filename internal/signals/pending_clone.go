package signals

// Clone returns an independent copy of the queue (reverse execution's
// checkpoints keep one).
func (p *Pending) Clone() Pending {
	c := *p
	c.queue = append([]SigInfo(nil), p.queue...)
	return c
}
