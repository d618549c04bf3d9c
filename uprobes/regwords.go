package uprobes

// A thread's registers as the words that hold them (BindRegWords): the
// hit paths read and write the PC, SP and a few general registers many
// times per hit, and a Regs method call each, through an adapter, costs
// more than the access.

// RegWords is a thread's register file as the words that hold it,
// aliasing the thread's state: a read or write through them is the
// corresponding Regs method's. GPR holds the registers of Reg numbers 0
// to len(GPR)-1 (x86-64: rax..r15, rsp at 4; arm64: x0..x30); SP and PC
// point at the stack pointer (on x86-64 &GPR[4]) and the program counter;
// Flags, when not nil, at the flags register as Flags and SetFlags see
// it (arm64's PSTATE word; nil on x86-64, whose RFLAGS is computed).
// The zero RegWords binds nothing.
type RegWords struct {
	GPR    []uint64
	SP, PC *uint64
	Flags  *uint64
}

// BindRegWords tells t where its thread's registers are, until the next
// call: every Regs passed to t's methods from then on must be that
// thread's registers (the same state, seen through methods). Call it
// whenever the thread's register file moves (a new CPU: thread creation,
// execve); the zero RegWords unbinds (the Regs methods are used).
func (t *Task) BindRegWords(w RegWords) {
	if w.SP == nil || w.PC == nil {
		w = RegWords{}
	}
	t.rw = w
}

// pc is r.PC(), through the bound words when there are some.
func (t *Task) pc(r Regs) uint64 {
	if p := t.rw.PC; p != nil {
		return *p
	}
	return r.PC()
}

// setPC is r.SetPC(v) (see pc).
func (t *Task) setPC(r Regs, v uint64) {
	if p := t.rw.PC; p != nil {
		*p = v
	} else {
		r.SetPC(v)
	}
}

// sp is r.SP() (see pc).
func (t *Task) sp(r Regs) uint64 {
	if p := t.rw.SP; p != nil {
		return *p
	}
	return r.SP()
}

// setSP is r.SetSP(v) (see pc).
func (t *Task) setSP(r Regs, v uint64) {
	if p := t.rw.SP; p != nil {
		*p = v
	} else {
		r.SetSP(v)
	}
}

// pflags is r.Flags() (see pc).
func (t *Task) pflags(r Regs) uint64 {
	if p := t.rw.Flags; p != nil {
		return *p
	}
	return r.Flags()
}

// setPflags is r.SetFlags(v) (see pc).
func (t *Task) setPflags(r Regs, v uint64) {
	if p := t.rw.Flags; p != nil {
		*p = v
	} else {
		r.SetFlags(v)
	}
}

// reg is r.Reg(i) (see pc); numbers outside the bound words go to r.
func (t *Task) reg(r Regs, i int) uint64 {
	if g := t.rw.GPR; uint(i) < uint(len(g)) {
		return g[i]
	}
	return r.Reg(i)
}

// setReg is r.SetReg(i, v) (see reg).
func (t *Task) setReg(r Regs, i int, v uint64) {
	if uint(i) < uint(len(t.rw.GPR)) {
		t.rw.GPR[i] = v
		return
	}
	r.SetReg(i, v)
}
