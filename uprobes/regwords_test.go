package uprobes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// words is r's register file as RegWords (what the tasks adapter binds
// for a CPU): x86-64 rax..r15 with rsp at 4, arm64 x0..x30 and SP.
func (r *fakeRegs) words() RegWords {
	if r.arch == ArchAMD64 {
		return RegWords{GPR: r.x[:16], SP: &r.x[4], PC: &r.pc}
	}
	return RegWords{GPR: r.x[:31], SP: &r.sp, PC: &r.pc, Flags: &r.flags}
}

// TestBindRegWords_X86Uretprobe: the x86 uretprobe round trip (entry
// with its emulated push, the uretprobe syscall with a handler that
// changes registers through Regs) gives the same answers through bound
// register words as through the Regs methods.
//
// With user words bound too (RegWords.Words), the stack accesses go
// through them (a counting fake over the address space) and, where they
// miss, take the slow path, with the same results.
func TestBindRegWords_X86Uretprobe(t *testing.T) {
	for _, mode := range []string{"regs", "bound", "words", "words-miss"} {
		bind := mode != "regs"
		text := make([]byte, 0x40)
		copy(text[0x10:], unhex(t, "55")) // push rbp
		w := newWorld(t, ArchAMD64, DefaultOptions(), text)
		var rax []uint64
		w.probe(0x10, Consumer{RetHandler: func(c *Ctx) {
			rax = append(rax, c.Regs.Reg(0))
			c.Regs.SetReg(0, c.Regs.Reg(0)+1) // the return value, rewritten
		}})
		th := &fakeThread{}
		tk, r := w.task(th, 1)
		var uw *fakeUserWords
		if bind {
			rw := r.words()
			if mode != "bound" {
				uw = &fakeUserWords{t: t, as: w.as, miss: mode == "words-miss"}
				rw.Words = uw
			}
			tk.BindRegWords(rw)
		}
		const sp0 = stackTop - 0x200
		w.as.poke64(t, sp0, 0x400800)
		r.SetSP(sp0)
		r.x[5] = 0xB0B
		r.pc = textBase + 0x10
		require.True(t, w.trap(tk, r, th))
		tramp, _ := w.mm.XOLArea()
		assert.Equal(t, tramp, w.as.peek64(t, sp0), "bind=%v", bind)
		assert.Equal(t, uint64(0xB0B), w.as.peek64(t, sp0-8), "bind=%v", bind)
		assert.Equal(t, uint64(sp0-8), r.SP(), "bind=%v", bind)
		assert.Equal(t, uint64(textBase+0x11), r.pc, "bind=%v", bind)

		r.SetSP(sp0 + 8)
		r.x[0], r.x[1], r.x[11] = 77, 0x1111, 0x2222
		sp := uint64(sp0 + 8 - 24)
		w.as.poke64(t, sp+16, r.x[0])
		w.as.poke64(t, sp+8, r.x[1])
		w.as.poke64(t, sp, r.x[11])
		r.SetSP(sp)
		r.x[0] = X86SysUretprobe
		r.pc = tramp + X86UretprobeCheckOffset
		r.x[1], r.x[11] = r.pc, r.flags
		assert.Equal(t, uint64(78), tk.SysUretprobe(r), "bind=%v", bind)
		assert.Equal(t, []uint64{77}, rax, "bind=%v", bind)
		assert.Equal(t, tramp+X86UretprobeCheckOffset, r.pc, "bind=%v", bind)
		assert.Equal(t, uint64(0x400800), w.as.peek64(t, r.SP()+16), "bind=%v", bind)
		assert.Equal(t, uint64(0x2222), w.as.peek64(t, r.SP()), "bind=%v", bind)
		assert.Equal(t, uint64(0x1111), w.as.peek64(t, r.SP()+8), "bind=%v", bind)
		assert.Equal(t, r.pc, r.x[1], "bind=%v: RCX is the PC", bind)
		assert.Empty(t, th.sentSignals(), "bind=%v", bind)
		if uw != nil {
			// swap: the hijack; read: the uretprobe syscall; write: the
			// emulated push and the syscall. A missed swap falls back
			// to a read and a write.
			want := [3]int{1, 1, 2}
			if uw.miss {
				want = [3]int{1, 2, 3}
			}
			assert.Equal(t, want, uw.calls, "%s: swap, read, write calls", mode)
		}
	}
}

// fakeUserWords is a UserWords over the fake address space that counts
// its calls (swap, read, write) and, with miss, answers none of them.
type fakeUserWords struct {
	t     *testing.T
	as    *fakeAS
	miss  bool
	calls [3]int
}

func (u *fakeUserWords) SwapUserWord(addr, v uint64) (old uint64, read, written bool) {
	u.calls[0]++
	if u.miss {
		return 0, false, false
	}
	old = u.as.peek64(u.t, addr)
	if old != v {
		u.as.poke64(u.t, addr, v)
	}
	return old, true, true
}

func (u *fakeUserWords) ReadUserWords(w []uint64, addr uint64) bool {
	u.calls[1]++
	if u.miss {
		return false
	}
	for i := range w {
		w[i] = u.as.peek64(u.t, addr+8*uint64(i))
	}
	return true
}

func (u *fakeUserWords) WriteUserWords(w []uint64, addr uint64) bool {
	u.calls[2]++
	if u.miss {
		return false
	}
	for i, v := range w {
		u.as.poke64(u.t, addr+8*uint64(i), v)
	}
	return true
}

// TestBindRegWords_ARM64Uretprobe: the arm64 round trip (LR hijack,
// simulated NOP clearing BTYPE, the trampoline's BRK) through bound
// words, and the zero RegWords unbinding.
func TestBindRegWords_ARM64Uretprobe(t *testing.T) {
	for _, bind := range []bool{false, true} {
		w := newRetWorld(t, DefaultOptions())
		if bind {
			w.tk.BindRegWords(w.r.words())
		}
		w.probe(a64NOPOff, w.retConsumer("f"))
		w.r.flags = 0xA0000000 | pstateBTYPE
		w.call(0x7fe000, 0x400800)
		assert.Equal(t, uint64(0xA0000000), w.r.flags, "bind=%v: BTYPE cleared, NZCV kept", bind)
		assert.Equal(t, w.tramp(), w.r.x[30], "bind=%v: LR hijacked", bind)
		w.ret(0x7fe000, 42)
		assert.Equal(t, uint64(0x400800), w.r.pc, "bind=%v", bind)
		assert.Equal(t, []retSeen{{fn: textBase + a64NOPOff, retAddr: 0x400800, x0: 42, name: "f"}}, w.rets, "bind=%v", bind)
		w.tk.BindRegWords(RegWords{})
		w.call(0x7fe000, 0x400900)
		w.ret(0x7fe000, 43)
		assert.Equal(t, uint64(0x400900), w.r.pc, "bind=%v: unbound", bind)
		assert.Len(t, w.rets, 2)
	}
}
