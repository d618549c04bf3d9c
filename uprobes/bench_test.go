package uprobes

import "testing"

// BenchmarkHit measures the uprobe path per hit on the test doubles
// (fake memory and registers): a simulated NOP (1 trap), a stepped STP (2
// traps; the instruction itself is not executed) and a uretprobe entry +
// return, with and without the return-instance pool.
func BenchmarkHit(b *testing.B) {
	cases := []struct {
		name string
		off  uint64
		ret  bool
		pool bool
	}{
		{"uprobe-nop", a64NOPOff, false, true},
		{"uprobe-stp-xol", a64STPOff, false, true},
		{"uretprobe-nop/pool", a64NOPOff, true, true},
		{"uretprobe-nop/nopool", a64NOPOff, true, false},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			o := DefaultOptions()
			o.ReturnInstancePool = bc.pool
			w := newWorld(b, ArchARM64, o, a64Text())
			c := Consumer{Handler: func(*Ctx) int { return 0 }}
			if bc.ret {
				c.RetHandler = func(*Ctx) {}
			}
			w.probe(bc.off, c)
			th := &fakeThread{}
			tk, r := w.task(th, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.pc, r.x[30] = textBase+bc.off, 0x400800
				tk.BreakpointTrap(r, r.pc, ARM64BRKImm)
				tk.NotifyResume(r)
				if tk.SingleStepping() {
					r.pc += 4
					tk.StepDone(r)
					tk.NotifyResume(r)
				}
				if bc.ret {
					r.pc = r.x[30]
					tk.BreakpointTrap(r, r.pc, ARM64BRKImm)
					tk.NotifyResume(r)
				}
			}
		})
	}
}
