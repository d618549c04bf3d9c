package amd64

import "github.com/uvm-emu/uvm/internal/decode"

// String instructions MOVS STOS LODS SCAS CMPS with REP/REPE/REPNE and DF.
//
// A REP instruction retires once, when its count reaches zero (or the
// REPE/REPNE condition stops it). It can be interrupted between
// iterations (Interrupt, or a fault): the registers then hold the state
// after the completed iterations and RIP stays at the instruction, as on
// hardware, so re-executing it continues the operation.

// stringCheckEvery is how many iterations run between interrupt checks.
const stringCheckEvery = 1 << 16

// opString executes one string instruction (all of its repetitions).
func (c *CPU) opString(in *decode.X86) xres {
	g := &c.regs.GPR
	w := in.Width
	amask := ^uint64(0)
	if in.Aux == 4 {
		amask = 0xFFFFFFFF
	}
	step := uint64(w)
	if c.flags&rfDF != 0 {
		step = -step
	}
	srcBase := c.segBase(in.Seg)
	rep := in.Rep
	op := in.Op
	if rep == 0 {
		return c.stringOnce(in, op, w, step, amask, srcBase)
	}
	if c.trapStep {
		return c.stringIteration(in, op, w, step, amask, srcBase)
	}
	if op == decode.X86Movs || op == decode.X86Stos {
		if r, done := c.stringFast(in, op, w, step, amask, srcBase); done {
			return r
		}
	}
	for k := 0; ; k++ {
		if g[1]&amask == 0 {
			return xOK
		}
		if k == stringCheckEvery {
			if c.interrupt.Load() {
				return xInterrupt
			}
			k = 0
		}
		if r := c.stringOnce(in, op, w, step, amask, srcBase); r != xOK {
			return r
		}
		setAddrReg(g, 1, amask, g[1]-1)
		if op == decode.X86Scas || op == decode.X86Cmps {
			zf := c.cond(decode.CondE)
			if (rep == decode.RepF3 && !zf) || (rep == decode.RepF2 && zf) {
				return xOK
			}
		}
	}
}

// setAddrReg writes an address-sized register (RSI, RDI, RCX).
func setAddrReg(g *[16]uint64, r int, amask, v uint64) {
	g[r&15] = v & amask
}

// stringOnce executes a single iteration.
func (c *CPU) stringOnce(in *decode.X86, op decode.X86Op, w uint8, step, amask, srcBase uint64) xres {
	g := &c.regs.GPR
	rsi, rdi := g[6]&amask, g[7]&amask
	switch op {
	case decode.X86Movs:
		v, ok := c.load(srcBase+rsi, w)
		if !ok {
			return xFault
		}
		if !c.store(rdi, w, v) {
			return xFault
		}
		setAddrReg(g, 6, amask, rsi+step)
		setAddrReg(g, 7, amask, rdi+step)
	case decode.X86Stos:
		if !c.store(rdi, w, g[0]) {
			return xFault
		}
		setAddrReg(g, 7, amask, rdi+step)
	case decode.X86Lods:
		v, ok := c.load(srcBase+rsi, w)
		if !ok {
			return xFault
		}
		c.setRegW(0, w, v)
		setAddrReg(g, 6, amask, rsi+step)
	case decode.X86Scas:
		v, ok := c.load(rdi, w)
		if !ok {
			return xFault
		}
		m := wmask[w]
		a := g[0] & m
		c.setSub(a, v, (a-v)&m, w)
		setAddrReg(g, 7, amask, rdi+step)
	case decode.X86Cmps:
		a, ok := c.load(srcBase+rsi, w)
		if !ok {
			return xFault
		}
		b, ok := c.load(rdi, w)
		if !ok {
			return xFault
		}
		m := wmask[w]
		c.setSub(a, b, (a-b)&m, w)
		setAddrReg(g, 6, amask, rsi+step)
		setAddrReg(g, 7, amask, rdi+step)
	}
	return xOK
}

// stringFast runs REP MOVS/STOS with DF=0 and 64-bit addressing in
// page-sized chunks. done is false when the caller must use the
// element-by-element loop instead (overlapping copies, DF=1, 0x67).
func (c *CPU) stringFast(in *decode.X86, op decode.X86Op, w uint8, step, amask, srcBase uint64) (xres, bool) {
	if amask != ^uint64(0) || c.flags&rfDF != 0 {
		return xOK, false
	}
	g := &c.regs.GPR
	var buf [512]byte
	iter := 0
	for g[1] != 0 {
		iter++
		if iter&1023 == 0 && c.interrupt.Load() {
			return xInterrupt, true
		}
		rdi := g[7]
		n := g[1]
		// Elements that fit before the end of rdi's page (and rsi's).
		room := (4096 - rdi&4095) / uint64(w)
		if op == decode.X86Movs {
			rsi := srcBase + g[6]
			if r := (4096 - rsi&4095) / uint64(w); r < room {
				room = r
			}
			// Overlap where the destination is ahead of the source by
			// less than the chunk: element order matters; copy slowly.
			if rdi > rsi && rdi-rsi < uint64(len(buf)) {
				return xOK, false
			}
		}
		if room > uint64(len(buf))/uint64(w) {
			room = uint64(len(buf)) / uint64(w)
		}
		if n > room {
			n = room
		}
		if n == 0 {
			// An element straddles a page boundary: one at a time.
			if r := c.stringOnce(in, op, w, step, amask, srcBase); r != xOK {
				return r, true
			}
			g[1]--
			continue
		}
		nb := n * uint64(w)
		b := buf[:nb]
		if op == decode.X86Movs {
			if !c.tlb.LoadBytes(srcBase+g[6], b) {
				return xFault, true
			}
			if c.cm != nil {
				c.cmData(srcBase+g[6], nb, false)
			}
		} else {
			v := g[0]
			for i := uint64(0); i < nb; i += uint64(w) {
				for j := uint64(0); j < uint64(w); j++ {
					b[i+j] = byte(v >> (8 * j))
				}
			}
		}
		if !c.tlb.StoreBytes(rdi, b) {
			return xFault, true
		}
		if c.cm != nil {
			c.cmData(rdi, nb, true)
		}
		if op == decode.X86Movs {
			g[6] += nb
		}
		g[7] += nb
		g[1] -= n
	}
	return xOK, true
}
