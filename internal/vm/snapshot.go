package vm

import "errors"

// ErrNotCopyable is CopyAll's answer for an address space it cannot copy
// exactly: one with MAP_SHARED areas other than the objects the caller
// maps across, or with pages it shares copy-on-write with another
// address space.
var ErrNotCopyable = errors.New("the address space has shared pages")

// CopyAll returns an independent copy of the address space: its areas,
// break, mmap base and identity, and a private copy of every present
// private page, charged to acct (nil: to nothing). Nothing of m changes
// (no page becomes copy-on-write), so a copy taken while m runs on
// neither charges m's memory account nor alters what its next writes
// cost; the caller stops m's threads for the time of the call. The copy
// has no predecoded code (Code is nil) and one user.
//
// A MAP_SHARED area is mapped in the copy to obj(its object), whose
// pages the copy then maps where m has them present (charged as a fault
// charges them); obj returns nil for an object that cannot be carried
// over, and CopyAll then fails with ErrNotCopyable, as it does for a
// private page shared copy-on-write (its owners' accounting would
// differ). Reverse execution's checkpoints (tasks) copy address spaces
// with it: once to freeze one, once again to run from the frozen copy.
func (m *MM) CopyAll(acct *MemAccount, obj func(*SharedObject) *SharedObject) (*MM, error) {
	m.BrkMu.Lock()
	brkStart, brk := m.BrkStart, m.Brk
	m.BrkMu.Unlock()
	m.mu.RLock()
	defer m.mu.RUnlock()
	vmas := append([]VMA(nil), m.vmas...)
	for i := range vmas {
		if o := vmas[i].Obj; o != nil {
			if vmas[i].Obj = obj(o); vmas[i].Obj == nil {
				return nil, ErrNotCopyable
			}
		}
	}
	shared := false
	m.walkPresent(0, TaskSize, func(_ uint64, e *pte) {
		if e.page.mapcount.Load() > 1 {
			shared = true
		}
	})
	if shared {
		return nil, ErrNotCopyable
	}
	c := &MM{vmas: vmas, MmapBase: m.MmapBase, ExePath: m.ExePath, ExeName: m.ExeName, Auxv: m.Auxv, Acct: acct}
	c.BrkStart, c.Brk = brkStart, brk
	c.users.Store(1)
	for i, v := range m.vmas {
		nv := vmas[i]
		var err error
		m.walkPresent(v.Start, v.End, func(vpn uint64, e *pte) {
			if err != nil {
				return
			}
			if nv.Obj != nil {
				p, _ := nv.Obj.page((nv.Offset + (vpn<<PageShift - nv.Start)) >> PageShift)
				if p == nil {
					err = ErrNotCopyable
					return
				}
				acct.add(1)
				c.setPTE(vpn, pte{page: p, prot: e.prot})
				return
			}
			p := c.newPrivatePage()
			p.Data = e.page.Data
			c.setPTE(vpn, pte{page: p, prot: e.prot})
		})
		if err != nil {
			c.Release()
			return nil, err
		}
	}
	return c, nil
}
