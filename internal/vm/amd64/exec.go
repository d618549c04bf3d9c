package amd64

import (
	"sync/atomic"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Run executes until an exit or until about budget instructions have
// retired. The budget is checked after every instruction; Interrupt is
// noticed at taken branches, page crossings and between iterations of long
// REP string instructions.
func (c *CPU) Run(budget int64) vm.Exit {
	c.tlb.Enter() // shootdowns see this CPU executing (vm.TLB)
	defer c.tlb.Leave()
	if c.interrupt.Load() { // a plain load on entry; an interrupt set after it stops the loop
		c.interrupt.Store(false)
		return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
	}
	if budget <= 0 {
		return vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
	}
	if c.cm != nil && c.cm.redecode { // cachemodel.go
		return c.runRedecode(uint64(budget), false)
	}
	return c.run(uint64(budget), false)
}

// Step executes exactly one instruction.
func (c *CPU) Step() vm.Exit {
	c.tlb.Enter()
	defer c.tlb.Leave()
	if c.cm != nil && c.cm.redecode {
		return c.runRedecode(1, true)
	}
	return c.run(1, true)
}

// page returns the valid decoded page for pc through the per-CPU cache.
func (c *CPU) page(pc uint64) (*icache.X86Page, *vm.Fault) {
	vpn := pc >> vm.PageShift
	slot := &c.pcache[vpn%pcacheSize]
	if p := *slot; p != nil && p.VPN == vpn && p.Valid() {
		return p, nil
	}
	p, f := c.code.Lookup(pc)
	if f != nil {
		return nil, f
	}
	c.tlb.SyncCode()
	*slot = p
	return p, nil
}

// fence is the target of MFENCE-style full barriers.
var fence atomic.Uint32

// run is the interpreter loop. limit is the number of instructions to
// retire before returning ExitBudget (or ExitStep when step is set).
func (c *CPU) run(limit uint64, step bool) (exit vm.Exit) {
	c.tlb.Sync()
	pc := c.regs.RIP
	// RF (restored by rt_sigreturn after a fault) is cleared when the
	// next instruction completes; a fault sets it again in its frame.
	c.flags &^= rfRF
	// st is the state of the outer loop, kept in memory (a struct of
	// more than four fields is not an SSA value) so that the inner loop
	// carries only the run, its index and the CPU in registers: a case
	// that calls out then reloads three values, not eight.
	var st struct {
		n      uint64 // instructions retired before the current run
		limit  uint64
		step   bool
		pg     *icache.X86Page
		pgBase uint64
		// first and last are the current run's first record and the
		// last one the budget lets execute; first is nil between runs.
		first, last *decode.X86
	}
	st.limit, st.step, st.pgBase = limit, step, ^uint64(0)
	if c.cm != nil { // cache model hooks: cachemodel.go
		c.cmEnter(pc)
	}
	var in *decode.X86
	var next uint64
	var res xres
	g := &c.regs.GPR
	// The outer loop finds a straight-line run of predecoded records
	// (icache.DecodeRun) and cuts it to the budget; the inner loop
	// (label insn) executes it, stepping in through the run's records.
	// The page, the budget and the record lookup are checked once per
	// run, and pc is kept only between runs: an instruction's own
	// address is in.PC. The instructions of a run retired so far are
	// icache.RunIndex(st.first, in).

	for {
		if st.n >= st.limit {
			goto budget
		}
		if pc&^uint64(vm.PageMask) != st.pgBase {
			p, f := c.page(pc)
			if f != nil {
				exit = vm.Exit{Reason: vm.ExitFault, PC: pc, Fault: *f}
				goto done
			}
			st.pg = p
			st.pgBase = pc &^ uint64(vm.PageMask)
		}
		in = st.pg.At(pc)
		if in == nil {
			r, f, dr := st.pg.DecodeRun(c.mm, pc)
			// Decoding an instruction that runs into the next page may
			// have marked that page as code (vm.MM.CodePage).
			c.tlb.Sync()
			switch dr {
			case icache.DecodeStale:
				st.pgBase = ^uint64(0)
				continue
			case icache.DecodeFault:
				exit = vm.Exit{Reason: vm.ExitFault, PC: pc, Fault: *f}
				goto done
			}
			in = r
		}
		st.first, st.last = in, icache.RunLast(in, st.limit-st.n)

	insn:
		switch in.Op {
		// Specialised forms (decode.specializeX86): Width is 4 or 8 (1
		// or 2 only for CMP and TEST, which write nothing) and register
		// operands are plain GPRs of that width, so a masked 64-bit write
		// implements the 32-bit zero-extension.
		case decode.X86MovRR:
			g[in.Args[0].Reg&15] = g[in.Args[1].Reg&15] & wmask[in.Width&15]
		case decode.X86MovRI:
			g[in.Args[0].Reg&15] = uint64(in.Imm)
		case decode.X86MovLd:
			a := c.ea0(&in.Args[1])
			var v uint64
			var ok bool
			if in.Width == 8 {
				v, ok = c.tlb.Load64(a)
			} else {
				var v32 uint32
				v32, ok = c.tlb.Load32(a)
				v = uint64(v32)
			}
			if !ok {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(a, uint64(in.Width), false)
			}
			g[in.Args[0].Reg&15] = v
		case decode.X86MovzxLd, decode.X86MovsxLd:
			// MOVZX/MOVSX/MOVSXD r32/r64, m8/m16/m32.
			a := c.ea0(&in.Args[1])
			var v uint64
			var ok bool
			switch in.Args[1].Size {
			case 1:
				var v8 uint8
				v8, ok = c.tlb.Load8(a)
				v = uint64(v8)
			case 2:
				var v16 uint16
				v16, ok = c.tlb.Load16(a)
				v = uint64(v16)
			default:
				var v32 uint32
				v32, ok = c.tlb.Load32(a)
				v = uint64(v32)
			}
			if !ok {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(a, uint64(in.Args[1].Size), false)
			}
			if in.Op == decode.X86MovsxLd {
				sh := 64 - 8*uint(in.Args[1].Size)
				v = uint64(int64(v<<sh)>>sh) & wmask[in.Width&15]
			}
			g[in.Args[0].Reg&15] = v
		case decode.X86MovzxRR, decode.X86MovsxRR:
			s := &in.Args[1]
			v := g[s.Reg&15] & wmask[s.Size&15]
			if in.Op == decode.X86MovsxRR {
				sh := 64 - 8*uint(s.Size)
				v = uint64(int64(v<<sh)>>sh) & wmask[in.Width&15]
			}
			g[in.Args[0].Reg&15] = v
		case decode.X86SetccR:
			var v uint64
			if c.cond(in.Cond) {
				v = 1
			}
			d := in.Args[0].Reg & 15
			g[d] = g[d]&^0xFF | v
		case decode.X86CmovRR:
			d := in.Args[0].Reg & 15
			v := g[d]
			if c.cond(in.Cond) {
				v = g[in.Args[1].Reg&15]
			}
			g[d] = v & wmask[in.Width&15] // a 32-bit CMOV zero-extends even when not taken
		case decode.X86MovSt, decode.X86MovStI:
			a := c.ea0(&in.Args[0])
			v := uint64(in.Imm)
			if in.Op == decode.X86MovSt {
				v = g[in.Args[1].Reg&15]
			}
			var ok bool
			if in.Width == 8 {
				ok = c.tlb.Store64(a, v)
			} else {
				ok = c.tlb.Store32(a, uint32(v))
			}
			if !ok {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(a, uint64(in.Width), true)
			}
		case decode.X86AddRR, decode.X86AddRI:
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a, b := g[d]&m, uint64(in.Imm)
			if in.Op == decode.X86AddRR {
				b = g[in.Args[1].Reg&15] & m
			}
			r := (a + b) & m
			g[d] = r
			c.lop, c.lw, c.la, c.lb, c.lr = lfAdd, in.Width, a, b, r
		case decode.X86SubRR, decode.X86SubRI, decode.X86CmpRR, decode.X86CmpRI:
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a, b := g[d]&m, uint64(in.Imm)
			if in.Op == decode.X86SubRR || in.Op == decode.X86CmpRR {
				b = g[in.Args[1].Reg&15] & m
			}
			r := (a - b) & m
			if in.Op <= decode.X86SubRI {
				g[d] = r
			}
			c.lop, c.lw, c.la, c.lb, c.lr = lfSub, in.Width, a, b, r
		case decode.X86AndRR, decode.X86AndRI, decode.X86OrRR, decode.X86OrRI,
			decode.X86XorRR, decode.X86XorRI, decode.X86TestRR, decode.X86TestRI:
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a, b := g[d]&m, uint64(in.Imm)
			if (in.Op-decode.X86AndRR)&1 == 0 {
				b = g[in.Args[1].Reg&15] & m
			}
			var r uint64
			switch in.Op {
			case decode.X86AndRR, decode.X86AndRI, decode.X86TestRR, decode.X86TestRI:
				r = a & b
			case decode.X86OrRR, decode.X86OrRI:
				r = a | b
			default:
				r = a ^ b
			}
			if in.Op < decode.X86TestRR {
				g[d] = r
			}
			c.lop, c.lw, c.lr = lfLogic, in.Width, r
		case decode.X86AdcRR, decode.X86AdcRI, decode.X86SbbRR, decode.X86SbbRI:
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a, b := g[d]&m, uint64(in.Imm)
			if in.Op == decode.X86AdcRR || in.Op == decode.X86SbbRR {
				b = g[in.Args[1].Reg&15] & m
			}
			cin := c.cf()
			if in.Op <= decode.X86AdcRI {
				r := (a + b + cin) & m
				g[d] = r
				c.lop, c.lw, c.la, c.lb, c.lr, c.lc = lfAdc, in.Width, a, b, r, cin
			} else {
				r := (a - b - cin) & m
				g[d] = r
				c.lop, c.lw, c.la, c.lb, c.lr, c.lc = lfSbb, in.Width, a, b, r, cin
			}
		case decode.X86LeaR:
			g[in.Args[0].Reg&15] = c.ea0(&in.Args[1]) & wmask[in.Width&15]
		case decode.X86ShlRI, decode.X86ShrRI, decode.X86SarRI:
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a, cnt := g[d]&m, uint64(in.Imm)
			var tmp, r uint64
			switch in.Op {
			case decode.X86ShlRI:
				tmp, r = (a<<(cnt-1))&m, (a<<cnt)&m
				c.lop = lfShl
			case decode.X86ShrRI:
				tmp, r = a>>(cnt-1), a>>cnt
				c.lop = lfShr
			default:
				sa := sext(a, in.Width)
				tmp, r = uint64(sa>>(cnt-1))&m, uint64(sa>>cnt)&m
				c.lop = lfShr
			}
			g[d] = g[d]&wkeep[in.Width&15] | r
			c.lw, c.la, c.lr = in.Width, tmp, r
		case decode.X86AluRM:
			v, ok := c.load(c.ea0(&in.Args[1]), in.Width)
			if !ok {
				res = xFault
				goto except
			}
			op := decode.X86Op(in.Aux)
			d, m := in.Args[0].Reg&15, wmask[in.Width&15]
			a := g[d] & m
			r := aluResult(op, a, v, 0, m)
			if op != decode.X86Cmp && op != decode.X86Test {
				g[d] = r
			}
			c.setAluFlags(op, a, v, r, 0, in.Width)
		case decode.X86CmpMR, decode.X86CmpMI:
			a, ok := c.load(c.ea0(&in.Args[0]), in.Width)
			if !ok {
				res = xFault
				goto except
			}
			m := wmask[in.Width&15]
			b := uint64(in.Imm)
			if in.Op == decode.X86CmpMR {
				b = g[in.Args[1].Reg&15] & m
			}
			if in.Aux == uint32(decode.X86Cmp) {
				c.lop, c.lw, c.la, c.lb, c.lr = lfSub, in.Width, a, b, (a-b)&m
			} else {
				c.lop, c.lw, c.lr = lfLogic, in.Width, a&b
			}
		case decode.X86Je, decode.X86Jne:
			// ZF is "result == 0" for every lazy producer.
			var z bool
			if c.lop != lfNone {
				z = c.lr == 0
			} else {
				z = c.flags&rfZF != 0
			}
			if z == (in.Op == decode.X86Je) {
				pc = uint64(in.Imm)
				goto taken
			}
		case decode.X86Jb, decode.X86Jae, decode.X86Jbe, decode.X86Ja,
			decode.X86Jl, decode.X86Jge, decode.X86Jle, decode.X86Jg:
			var t bool
			if c.lop == lfSub {
				a, b := c.la, c.lb
				switch in.Op {
				case decode.X86Jb:
					t = a < b
				case decode.X86Jae:
					t = a >= b
				case decode.X86Jbe:
					t = a <= b
				case decode.X86Ja:
					t = a > b
				default:
					sh := 64 - 8*uint(c.lw)
					sa, sb := int64(a<<sh), int64(b<<sh)
					switch in.Op {
					case decode.X86Jl:
						t = sa < sb
					case decode.X86Jge:
						t = sa >= sb
					case decode.X86Jle:
						t = sa <= sb
					default:
						t = sa > sb
					}
				}
			} else {
				t = c.cond(uint8(in.Op - decode.X86Jo))
			}
			if t {
				pc = uint64(in.Imm)
				goto taken
			}
		case decode.X86Jo, decode.X86Jno, decode.X86Js, decode.X86Jns, decode.X86Jp, decode.X86Jnp:
			if c.cond(uint8(in.Op - decode.X86Jo)) {
				pc = uint64(in.Imm)
				goto taken
			}

		// Generic forms.
		case decode.X86Mov:
			if res = c.opMov(in); res != xOK {
				goto except
			}
		case decode.X86Lea:
			c.setReg(&in.Args[0], c.eaNoSeg(&in.Args[1]))
		case decode.X86Add, decode.X86Sub, decode.X86Cmp, decode.X86And, decode.X86Or, decode.X86Xor, decode.X86Test:
			if res = c.opALU(in); res != xOK {
				goto except
			}
		case decode.X86Adc, decode.X86Sbb:
			if res = c.opALU(in); res != xOK {
				goto except
			}
		case decode.X86Inc, decode.X86Dec, decode.X86Neg, decode.X86Not:
			if res = c.opUnary(in); res != xOK {
				goto except
			}
		case decode.X86Rol, decode.X86Ror, decode.X86Rcl, decode.X86Rcr, decode.X86Shl, decode.X86Shr, decode.X86Sar:
			if res = c.opShift(in); res != xOK {
				goto except
			}
		case decode.X86Shld, decode.X86Shrd:
			if res = c.opShiftD(in); res != xOK {
				goto except
			}
		case decode.X86Movzx, decode.X86Movsx:
			if res = c.opMovx(in); res != xOK {
				goto except
			}
		case decode.X86Xchg:
			if res = c.opXchg(in); res != xOK {
				goto except
			}
		case decode.X86Cmov:
			if res = c.opCmov(in); res != xOK {
				goto except
			}
		case decode.X86Setcc:
			if res = c.opSetcc(in); res != xOK {
				goto except
			}
		case decode.X86Bswap:
			c.opBswap(in)
		case decode.X86Cbw, decode.X86Cwd:
			c.opCbwCwd(in)
		case decode.X86Push:
			if in.Args[0].Kind == decode.ArgReg && in.Width == 8 {
				sp := g[4] - 8
				if !c.tlb.Store64(sp, g[in.Args[0].Reg&15]) {
					res = xFault
					goto except
				}
				if c.cm != nil {
					c.cmData(sp, 8, true)
				}
				g[4] = sp
				break
			}
			if res = c.opPush(in); res != xOK {
				goto except
			}
		case decode.X86Pop:
			if in.Args[0].Kind == decode.ArgReg && in.Width == 8 {
				v, ok := c.tlb.Load64(g[4])
				if !ok {
					res = xFault
					goto except
				}
				if c.cm != nil {
					c.cmData(g[4], 8, false)
				}
				g[4] += 8
				g[in.Args[0].Reg&15] = v
				break
			}
			if res = c.opPop(in); res != xOK {
				goto except
			}
		case decode.X86Pushf:
			if res = c.opPushf(in); res != xOK {
				goto except
			}
		case decode.X86Popf:
			if res = c.opPopf(in); res != xOK {
				goto except
			}
			if c.flags&(rfTF|rfAC) != 0 { // trapflag.go
				goto trapFlags
			}
		case decode.X86Leave:
			if res = c.opLeave(in); res != xOK {
				goto except
			}
		case decode.X86Enter:
			if res = c.opEnter(in); res != xOK {
				goto except
			}
		case decode.X86Xlat:
			if res = c.opXlat(in); res != xOK {
				goto except
			}
		case decode.X86Lahf, decode.X86Sahf:
			c.opLahfSahf(in)
		case decode.X86Mul, decode.X86Imul1, decode.X86Div, decode.X86Idiv:
			if res = c.opMulDiv(in); res != xOK {
				goto except
			}
		case decode.X86Imul:
			if res = c.opImul(in); res != xOK {
				goto except
			}
		case decode.X86Bt, decode.X86Bts, decode.X86Btr, decode.X86Btc:
			if res = c.opBitTest(in); res != xOK {
				goto except
			}
		case decode.X86Bsf, decode.X86Bsr, decode.X86Tzcnt, decode.X86Lzcnt, decode.X86Popcnt:
			if res = c.opBitScan(in); res != xOK {
				goto except
			}
		case decode.X86Cmpxchg:
			if res = c.opCmpxchg(in); res != xOK {
				goto except
			}
		case decode.X86Cmpxchg8b, decode.X86Cmpxchg16b:
			if res = c.opCmpxchg8b16b(in); res != xOK {
				goto except
			}
		case decode.X86Xadd:
			if res = c.opXadd(in); res != xOK {
				goto except
			}
		case decode.X86Movbe:
			if res = c.opMovbe(in); res != xOK {
				goto except
			}
		case decode.X86MovSeg:
			if res = c.opMovSeg(in); res != xOK {
				goto except
			}
		case decode.X86MovToSeg: // segs.go
			if res = c.opMovToSeg(in); res != xOK {
				goto except
			}
		case decode.X86PushSeg:
			if res = c.opPushSeg(in); res != xOK {
				goto except
			}
		case decode.X86PopSeg:
			if res = c.opPopSeg(in); res != xOK {
				goto except
			}
		case decode.X86Lret:
			if res = c.opLret(in, &pc); res != xOK {
				goto except
			}
			goto taken
		case decode.X86FarJmp, decode.X86FarCall:
			if res = c.opFar(in, &pc); res != xOK {
				goto except
			}
			goto taken

		// Control flow.
		case decode.X86Jcc:
			if c.cond(in.Cond) {
				pc = uint64(in.Imm)
				goto taken
			}
		case decode.X86Jmp:
			pc = uint64(in.Imm)
			goto taken
		case decode.X86JmpInd:
			t, ok := c.read(in, &in.Args[0])
			if !ok {
				res = xFault
				goto except
			}
			pc = t
			goto taken
		case decode.X86Call:
			sp := g[4] - 8
			next = in.PC + uint64(in.Len)
			if !c.tlb.Store64(sp, next) {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(sp, 8, true)
			}
			g[4] = sp
			pc = uint64(in.Imm)
			goto taken
		case decode.X86CallInd:
			var t uint64
			if a := &in.Args[0]; a.Kind == decode.ArgReg && a.Size == 8 {
				t = g[a.Reg&15] // call *%reg: no operand read
			} else {
				var ok bool
				if t, ok = c.read(in, a); !ok {
					res = xFault
					goto except
				}
			}
			sp := g[4] - 8
			next = in.PC + uint64(in.Len)
			if !c.tlb.Store64(sp, next) {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(sp, 8, true)
			}
			g[4] = sp
			pc = t
			goto taken
		case decode.X86Ret:
			t, ok := c.tlb.Load64(g[4])
			if !ok {
				res = xFault
				goto except
			}
			if c.cm != nil {
				c.cmData(g[4], 8, false)
			}
			g[4] += 8 + uint64(in.Imm)
			pc = t
			goto taken
		case decode.X86Iret:
			var v [5]uint64
			for i := range v {
				var ok bool
				if v[i], ok = c.tlb.Load64(g[4] + 8*uint64(i)); !ok {
					res = xFault
					goto except
				}
			}
			f := c.rflags()
			c.flags = f&^popfMask | v[2]&popfMask | rfFixed
			c.lop = lfNone
			g[4] = v[3]
			pc = v[0]
			if c.flags&(rfTF|rfAC) != 0 { // trapflag.go
				st.n += icache.RunIndex(st.first, in) + 1
				st.first = nil
				exit = c.trapFlagsExit(pc, st.step)
				goto done
			}
			goto taken
		case decode.X86Jrcxz:
			if g[1]&wmask[in.Aux&15] == 0 {
				pc = uint64(in.Imm)
				goto taken
			}
		case decode.X86Loop, decode.X86Loope, decode.X86Loopne:
			am := wmask[in.Aux&15]
			cx := (g[1] - 1) & am
			g[1] = g[1]&^am | cx
			if in.Aux == 4 {
				g[1] = cx
			}
			t := cx != 0
			switch in.Op {
			case decode.X86Loope:
				t = t && c.cond(decode.CondE)
			case decode.X86Loopne:
				t = t && !c.cond(decode.CondE)
			}
			if t {
				pc = uint64(in.Imm)
				goto taken
			}

		case decode.X86Movs, decode.X86Stos, decode.X86Lods, decode.X86Scas, decode.X86Cmps:
			if res = c.opString(in); res != xOK {
				goto except
			}
		case decode.X86Clc, decode.X86Stc, decode.X86Cmc, decode.X86Cld, decode.X86Std:
			c.opFlagOp(in)

		// System.
		case decode.X86Syscall:
			f := c.rflags()
			c.flags, c.lop = f, lfNone // materialised once: the kernel side reads RFLAGS too
			next = in.PC + uint64(in.Len)
			g[1] = next
			g[11] = f &^ (1 << 16) // RF is cleared in the saved copy
			st.n++
			exit = vm.Exit{Reason: vm.ExitSyscall, PC: next}
			pc = next
			if c.trap != nil {
				goto trap
			}
			goto done
		case decode.X86Cpuid:
			a, b, cc, d := c.cpuidModel(uint32(g[0]), uint32(g[1]))
			g[0], g[3], g[1], g[2] = uint64(a), uint64(b), uint64(cc), uint64(d)
		case decode.X86Rdtsc, decode.X86Rdtscp:
			t := c.retired + st.n + icache.RunIndex(st.first, in)
			if c.TSC != nil {
				t = c.TSC(t, in.PC)
			}
			g[0], g[2] = t&0xFFFFFFFF, t>>32
			if in.Op == decode.X86Rdtscp {
				g[1] = uint64(c.TSCAux)
			}
		case decode.X86Nop, decode.X86Prefetch:
		case decode.X86Pause:
			if c.interrupt.Load() {
				st.n++
				pc = in.PC + uint64(in.Len)
				c.interrupt.Store(false)
				exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
				goto done
			}
		case decode.X86Fence:
			fence.Add(1)
		case decode.X86Clflush:
			if _, ok := c.tlb.Load8(c.addr(&in.Args[0])); !ok {
				res = xFault
				goto except
			}
		case decode.X86Int3:
			exit = vm.Exit{Reason: vm.ExitBreakpoint, PC: in.PC}
			if c.trap != nil {
				goto trap
			}
			goto done
		case decode.X86Int, decode.X86Priv:
			res = xPriv
			goto except
		case decode.X86Undefined, decode.X86Ud:
			c.why = ""
			res = xUndef
			goto except
		default:
			if in.Op >= decode.X86SSEBase {
				var r sseResult
				if isSSEHot(in.Op) { // ssehot.go
					r = c.execSSEHot(in)
				} else {
					r = c.execSSE(in, in.PC)
				}
				switch r {
				case sseOK:
				case sseFault:
					res = xFault
					goto except
				case sseDivide:
					res = xDivide
					goto except
				case sseGP:
					res = xPriv
					goto except
				case sseFPE:
					res = xSIMDFP
					goto except
				case sseMF:
					res = xMF
					goto except
				default:
					c.why = ""
					res = xUndef
					goto except
				}
				break
			}
			if in.Op >= decode.X86Andn && in.Op <= decode.X86Wrgsbase { // bmi.go
				if res = c.execIntExt(in); res != xOK {
					goto except
				}
				break
			}
			c.why = "unimplemented op " + in.Op.String()
			res = xUndef
			goto except
		}
		if in != st.last {
			in = icache.RunNext(in)
			goto insn
		}
		st.n += icache.RunIndex(st.first, in) + 1
		st.first = nil
		pc = in.PC + uint64(in.Len)
		continue

	trap:
		// SYSCALL or INT3 with a kernel fast path (vm.TrapHandler): unless
		// this is a step, the trapping instruction used up the budget or the
		// cache model is on, the handler runs here and execution goes on
		// without leaving Run.
		st.n += icache.RunIndex(st.first, in)
		st.first = nil
		if st.step || st.n >= st.limit || c.cm != nil {
			goto done
		}
		switch act, used := c.fastTrap(exit.Reason, exit.PC, st.n, st.limit-st.n); act {
		case vm.TrapResume:
			st.limit -= min(used, st.limit) // st.n and the handler's steps
			st.n = 0
			pc = c.regs.RIP
			if !st.pg.Valid() { // the handler changed the code or its mapping
				st.pgBase = ^uint64(0)
			}
			continue
		case vm.TrapLeave:
			exit = vm.Exit{Reason: vm.ExitBudget, PC: c.regs.RIP}
		}
		st.n = 0 // fastTrap counted them
		goto done

	taken:
		st.n += icache.RunIndex(st.first, in) + 1
		st.first = nil
		if c.cm != nil {
			c.cmTaken(pc, in.PC+uint64(in.Len), st.n)
		}
		if st.n >= st.limit {
			goto budget
		}
		if pc&^uint64(vm.PageMask) == st.pgBase && !st.pg.Valid() {
			st.pgBase = ^uint64(0)
		}
		if c.interrupt.Load() {
			c.interrupt.Store(false)
			exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
			goto done
		}
	}

trapFlags:
	// POPF set TF or AC: the run ends after it, and the caller steps
	// (TF) or checks alignment (AC) from the next instruction.
	st.n++
	pc = in.PC + uint64(in.Len)
	exit = c.trapFlagsExit(pc, st.step)
	goto done

budget:
	if st.step {
		exit = vm.Exit{Reason: vm.ExitStep, PC: pc}
	} else {
		exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
	}
	goto done

except:
	pc = in.PC
	switch res {
	case xFault:
		exit = vm.Exit{Reason: vm.ExitFault, PC: pc, Fault: c.tlb.Fault}
	case xDivide:
		exit = vm.Exit{Reason: vm.ExitDivide, PC: pc}
	case xPriv: // #GP(gpErr)
		exit = vm.Exit{Reason: vm.ExitPrivileged, PC: pc, Code: uint32(c.gpErr)}
		c.gpErr = 0
	case xSIMDFP:
		// Unmasked SIMD/x87 floating-point exception: SIGFPE with the
		// si_code in Code (FPE_FLTINV, FPE_FLTDIV …).
		exit = vm.Exit{Reason: vm.ExitDivide, PC: pc, Code: uint32(SIMDFPECode(c.regs.MXCSR))}
	case xMF: // x87trap.go
		exit = vm.Exit{Reason: vm.ExitDivide, PC: pc, Code: uint32(X87FPECode(c.regs.FSW, c.regs.FCW)) | FPECodeX87}
	case xInterrupt:
		c.interrupt.Store(false)
		exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
	case xIteration: // trapstep.go
		exit = vm.Exit{Reason: vm.ExitStep, PC: pc}
	default:
		exit = c.undefinedExit(pc)
	}

done:
	if st.first != nil {
		st.n += icache.RunIndex(st.first, in)
	}
	if c.cm != nil {
		c.cmFetch(exit.PC, st.n)
	}
	c.regs.RIP = exit.PC
	c.retired += st.n
	return exit
}

// fastTrap calls the trap handler for an exit with the state Run's return
// would leave (n more instructions retired, PC stored, TLB outside guest
// execution) and resynchronises the TLB afterwards; used is what it
// retired, n and the handler's steps. A step the handler makes runs on
// its own locals (run), so this loop's state survives it.
//
//go:noinline
func (c *CPU) fastTrap(reason vm.ExitReason, pc, n, left uint64) (act vm.TrapAction, used uint64) {
	r0 := c.retired
	c.regs.RIP = pc
	c.retired += n
	c.tlb.Leave()
	act = c.trap.Trap(reason, pc, 0, left)
	c.tlb.Enter()
	return act, c.retired - r0
}

// SetTrapHandler installs the kernel's fast path for SYSCALL and INT3
// (nil removes it).
func (c *CPU) SetTrapHandler(h vm.TrapHandler) { c.trap = h }

// undefinedExit builds the ExitUndefined for the instruction at pc.
func (c *CPU) undefinedExit(pc uint64) vm.Exit {
	e := vm.Exit{Reason: vm.ExitUndefined, PC: pc}
	for i := 0; i < 15; i++ {
		var b [1]byte
		if c.mm.Peek(b[:], pc+uint64(i)) != nil {
			break
		}
		e.Raw[i] = b[0]
		e.RawLen++
	}
	why := c.why
	if why == "" {
		why = "undefined or unimplemented instruction"
	}
	e.Why = why + ": " + decode.DisasmX86(e.Raw[:e.RawLen], pc)
	c.why = ""
	return e
}
