package arm64

//go:generate go run gen_hooked.go

import (
	"math/bits"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Run executes until an exit, or until at least budget instructions have
// retired (checked at block boundaries: taken branches and page
// crossings), or until Interrupt.
//
// Code modification rule: the decoded page is revalidated (its CodeVersion
// compared) on entry to Run/Step, at every taken branch, at page crossings,
// after ISB and after IC IVAU. A store to the code being executed is
// therefore visible to instruction fetch after the next taken branch at
// the latest — earlier than the architecture requires (DC CVAU + DSB +
// IC IVAU + DSB + ISB), so correctly synchronised programs always see
// their new code. With the strict cache model on (SetCacheModel,
// cachemodel.go) fetch follows the architecture instead: new bytes are
// executed only after DC CVAU, IC IVAU and a context synchronisation
// (see icache/doc.go).
func (c *CPU) Run(budget int64) vm.Exit {
	c.tlb.Enter() // shootdowns see this CPU executing (vm.TLB)
	defer c.tlb.Leave()
	if budget < 0 {
		budget = 0
	}
	if c.cm != nil { // cache model or re-decode mode: cachemodel.go
		return c.runHooked(uint64(budget), false)
	}
	return c.run(uint64(budget), false)
}

// Step executes exactly one instruction and returns ExitStep, unless that
// instruction exits otherwise (syscall, fault, breakpoint, …).
func (c *CPU) Step() vm.Exit {
	c.tlb.Enter()
	defer c.tlb.Leave()
	if c.cm != nil {
		return c.runHooked(1, true)
	}
	return c.run(1, true)
}

// ea is the address of a load or store whose mode is not A64ModeOffset.
func ea(in *decode.A64, r *gprView, pc uint64) uint64 {
	switch in.Flags & decode.A64ModeMask {
	case decode.A64ModePost:
		return r[in.Rn]
	case decode.A64ModeReg:
		return r[in.Rn] + extendOp(r[in.Rm], in.Shift)<<in.Amount
	case decode.A64ModeLit:
		return pc + in.Imm
	default:
		return r[in.Rn] + in.Imm
	}
}

// writeback updates the base register of a pre/post-indexed access.
func writeback(in *decode.A64, r *gprView, addr uint64) {
	switch in.Flags & decode.A64ModeMask {
	case decode.A64ModePre:
		r[in.Rn] = addr
	case decode.A64ModePost:
		r[in.Rn] = addr + in.Imm
	}
}

// op2 is the shifted second operand of a shifted-register instruction.
func op2(in *decode.A64, v uint64) uint64 {
	if in.Amount == 0 {
		return v
	}
	return shiftOp(v, in.Shift, in.Amount)
}

func (c *CPU) run(limit uint64, step bool) (exit vm.Exit) {
	c.tlb.Sync()
	c.regs.ZR = 0
	// Block-level state lives in c, not in locals, so that the few values
	// carried from one instruction to the next (pc, nzcv, the page, end)
	// stay in registers.
	c.limit, c.step, c.n = limit, step, 0
	r := c.gpr()
	pc := c.regs.PC
	nzcv := c.regs.NZCV >> 28 & 15
	var pg *icache.A64Page
	var end uint64 // where the current block must stop: pg's end, or pc+4 for a step
	var in *decode.A64
	var addr uint64
	var res memResult

block:
	for {
		if c.n >= c.limit {
			exit.Reason = vm.ExitBudget
			if c.step {
				exit.Reason = vm.ExitStep
			}
			exit.PC = pc
			goto done
		}
		if c.stop.Load() != 0 && !c.step {
			c.stop.Store(0)
			exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
			goto done
		}
		if pc&3 != 0 { // BR/BLR/RET to a misaligned address: PC alignment fault
			exit = vm.Exit{Reason: vm.ExitAlignment, PC: pc, Fault: vm.Fault{Addr: pc, Access: vm.AccessExec}}
			goto done
		}
		if pg == nil || pc-pg.VA >= vm.PageSize || !pg.Valid() {
			var f *vm.Fault
			if pg, f = c.page(pc); f != nil {
				exit = vm.Exit{Reason: vm.ExitFault, PC: pc, Fault: *f}
				exit.Fault.Access = vm.AccessExec
				goto done
			}
			// A step (limit 1) runs one block: the first.
			if end = pg.VA + vm.PageSize; c.step {
				end = pc + 4
			}
		}
		c.blockStart = pc
		for pc < end {
			in = insnAt(pg, pc)
			switch in.Op {
			case decode.A64ADDI:
				r[in.Rd] = (r[in.Rn] + in.Imm) & wmask(in.Sf)
			case decode.A64ADDSI:
				r[in.Rd], nzcv = addFlags(r[in.Rn], in.Imm, 0, in.Sf)
			case decode.A64SUBSI:
				r[in.Rd], nzcv = addFlags(r[in.Rn], ^in.Imm, 1, in.Sf)
			case decode.A64ADR:
				r[in.Rd] = pc + in.Imm
			case decode.A64ADRP:
				r[in.Rd] = pc&^0xfff + in.Imm
			case decode.A64ANDI:
				r[in.Rd] = r[in.Rn] & in.Imm
			case decode.A64ORRI:
				r[in.Rd] = (r[in.Rn] | in.Imm) & wmask(in.Sf)
			case decode.A64EORI:
				r[in.Rd] = (r[in.Rn] ^ in.Imm) & wmask(in.Sf)
			case decode.A64ANDSI:
				v := r[in.Rn] & in.Imm
				r[in.Rd] = v
				nzcv = logicFlags(v, in.Sf)
			case decode.A64MOVI:
				r[in.Rd] = in.Imm
			case decode.A64MOVK:
				r[in.Rd] = r[in.Rd]&in.Imm2 | in.Imm
			case decode.A64UBFM:
				r[in.Rd] = bits.RotateLeft64(rep32(r[in.Rn], in.Sf), -int(in.Amount)) & in.Imm
			case decode.A64SBFM:
				r[in.Rd] = sbfm(in, r[in.Rn])
			case decode.A64BFM:
				r[in.Rd] = bfm(in, r[in.Rm], r[in.Rn])
			case decode.A64LSLI:
				r[in.Rd] = r[in.Rn] << in.Amount & wmask(in.Sf)
			case decode.A64LSRI:
				r[in.Rd] = r[in.Rn] & wmask(in.Sf) >> in.Amount
			case decode.A64ASRI:
				if in.Sf != 0 {
					r[in.Rd] = uint64(int64(r[in.Rn]) >> in.Amount)
				} else {
					r[in.Rd] = uint64(uint32(int32(r[in.Rn]) >> in.Amount))
				}
			case decode.A64SXTW:
				sh := 64 - in.Amount
				r[in.Rd] = uint64(int64(r[in.Rn]<<sh)>>sh) & wmask(in.Sf)
			case decode.A64EXTR:
				if in.Sf != 0 {
					r[in.Rd] = r[in.Rm]>>in.Amount | r[in.Rn]<<(64-in.Amount)
				} else {
					v := r[in.Rn]<<32 | r[in.Rm]&0xffffffff
					r[in.Rd] = v >> in.Amount & 0xffffffff
				}

			case decode.A64ADDR:
				r[in.Rd] = (r[in.Rn] + op2(in, r[in.Rm])) & wmask(in.Sf)
			case decode.A64ADDSR:
				r[in.Rd], nzcv = addFlags(r[in.Rn], op2(in, r[in.Rm]), 0, in.Sf)
			case decode.A64SUBR:
				r[in.Rd] = (r[in.Rn] - op2(in, r[in.Rm])) & wmask(in.Sf)
			case decode.A64SUBSR:
				r[in.Rd], nzcv = addFlags(r[in.Rn], ^op2(in, r[in.Rm]), 1, in.Sf)
			case decode.A64ADDX:
				r[in.Rd] = (r[in.Rn] + extendOp(r[in.Rm], in.Shift)<<in.Amount) & wmask(in.Sf)
			case decode.A64ADDSX:
				r[in.Rd], nzcv = addFlags(r[in.Rn], extendOp(r[in.Rm], in.Shift)<<in.Amount, 0, in.Sf)
			case decode.A64SUBX:
				r[in.Rd] = (r[in.Rn] - extendOp(r[in.Rm], in.Shift)<<in.Amount) & wmask(in.Sf)
			case decode.A64SUBSX:
				r[in.Rd], nzcv = addFlags(r[in.Rn], ^(extendOp(r[in.Rm], in.Shift) << in.Amount), 1, in.Sf)
			case decode.A64ANDR:
				r[in.Rd] = r[in.Rn] & (op2(in, r[in.Rm]) ^ -uint64(in.Flags&1)) & wmask(in.Sf)
			case decode.A64ORRR:
				r[in.Rd] = (r[in.Rn] | (op2(in, r[in.Rm]) ^ -uint64(in.Flags&1))) & wmask(in.Sf)
			case decode.A64EORR:
				r[in.Rd] = (r[in.Rn] ^ op2(in, r[in.Rm]) ^ -uint64(in.Flags&1)) & wmask(in.Sf)
			case decode.A64ANDSR:
				v := r[in.Rn] & (op2(in, r[in.Rm]) ^ -uint64(in.Flags&1)) & wmask(in.Sf)
				r[in.Rd] = v
				nzcv = logicFlags(v, in.Sf)
			case decode.A64MOVR:
				r[in.Rd] = r[in.Rm] & wmask(in.Sf)
			case decode.A64ADC:
				r[in.Rd] = (r[in.Rn] + r[in.Rm] + nzcv>>1&1) & wmask(in.Sf)
			case decode.A64ADCS:
				r[in.Rd], nzcv = addFlags(r[in.Rn], r[in.Rm], nzcv>>1&1, in.Sf)
			case decode.A64SBC:
				r[in.Rd] = (r[in.Rn] + ^r[in.Rm] + nzcv>>1&1) & wmask(in.Sf)
			case decode.A64SBCS:
				r[in.Rd], nzcv = addFlags(r[in.Rn], ^r[in.Rm], nzcv>>1&1, in.Sf)
			case decode.A64CCMN:
				if condHolds(in.Cond, nzcv) {
					b := in.Imm
					if in.Flags&decode.A64FlagImm == 0 {
						b = r[in.Rm]
					}
					_, nzcv = addFlags(r[in.Rn], b, 0, in.Sf)
				} else {
					nzcv = uint64(in.Amount)
				}
			case decode.A64CCMP:
				if condHolds(in.Cond, nzcv) {
					b := in.Imm
					if in.Flags&decode.A64FlagImm == 0 {
						b = r[in.Rm]
					}
					_, nzcv = addFlags(r[in.Rn], ^b, 1, in.Sf)
				} else {
					nzcv = uint64(in.Amount)
				}
			case decode.A64CSEL:
				v := r[in.Rm]
				if condHolds(in.Cond, nzcv) {
					v = r[in.Rn]
				}
				r[in.Rd] = v & wmask(in.Sf)
			case decode.A64CSINC:
				v := r[in.Rm] + 1
				if condHolds(in.Cond, nzcv) {
					v = r[in.Rn]
				}
				r[in.Rd] = v & wmask(in.Sf)
			case decode.A64CSINV:
				v := ^r[in.Rm]
				if condHolds(in.Cond, nzcv) {
					v = r[in.Rn]
				}
				r[in.Rd] = v & wmask(in.Sf)
			case decode.A64CSNEG:
				v := -r[in.Rm]
				if condHolds(in.Cond, nzcv) {
					v = r[in.Rn]
				}
				r[in.Rd] = v & wmask(in.Sf)
			case decode.A64MADD:
				r[in.Rd] = (r[in.Ra] + r[in.Rn]*r[in.Rm]) & wmask(in.Sf)
			case decode.A64MSUB:
				r[in.Rd] = (r[in.Ra] - r[in.Rn]*r[in.Rm]) & wmask(in.Sf)
			case decode.A64SMADDL:
				r[in.Rd] = r[in.Ra] + uint64(int64(int32(r[in.Rn]))*int64(int32(r[in.Rm])))
			case decode.A64SMSUBL:
				r[in.Rd] = r[in.Ra] - uint64(int64(int32(r[in.Rn]))*int64(int32(r[in.Rm])))
			case decode.A64UMADDL:
				r[in.Rd] = r[in.Ra] + (r[in.Rn]&0xffffffff)*(r[in.Rm]&0xffffffff)
			case decode.A64UMSUBL:
				r[in.Rd] = r[in.Ra] - (r[in.Rn]&0xffffffff)*(r[in.Rm]&0xffffffff)
			case decode.A64SMULH:
				r[in.Rd] = smulh(r[in.Rn], r[in.Rm])
			case decode.A64UMULH:
				r[in.Rd], _ = bits.Mul64(r[in.Rn], r[in.Rm])
			case decode.A64UDIV:
				r[in.Rd] = udiv(r[in.Rn], r[in.Rm], in.Sf)
			case decode.A64SDIV:
				r[in.Rd] = sdiv(r[in.Rn], r[in.Rm], in.Sf)
			case decode.A64LSLV:
				r[in.Rd] = r[in.Rn] << (r[in.Rm] & (31 | uint64(in.Sf)<<5)) & wmask(in.Sf)
			case decode.A64LSRV:
				r[in.Rd] = r[in.Rn] & wmask(in.Sf) >> (r[in.Rm] & (31 | uint64(in.Sf)<<5))
			case decode.A64ASRV:
				if in.Sf != 0 {
					r[in.Rd] = uint64(int64(r[in.Rn]) >> (r[in.Rm] & 63))
				} else {
					r[in.Rd] = uint64(uint32(int32(r[in.Rn]) >> (r[in.Rm] & 31)))
				}
			case decode.A64RORV:
				if in.Sf != 0 {
					r[in.Rd] = bits.RotateLeft64(r[in.Rn], -int(r[in.Rm]&63))
				} else {
					r[in.Rd] = uint64(bits.RotateLeft32(uint32(r[in.Rn]), -int(r[in.Rm]&31)))
				}
			case decode.A64CRC32:
				r[in.Rd] = uint64(crc32Op(uint32(r[in.Rn]), r[in.Rm], in.Size, in.Flags&decode.A64FlagCRC32C != 0))
			case decode.A64RBIT:
				if in.Sf != 0 {
					r[in.Rd] = bits.Reverse64(r[in.Rn])
				} else {
					r[in.Rd] = uint64(bits.Reverse32(uint32(r[in.Rn])))
				}
			case decode.A64REV16:
				r[in.Rd] = rev16(r[in.Rn]) & wmask(in.Sf)
			case decode.A64REV32:
				r[in.Rd] = rev32(r[in.Rn])
			case decode.A64REV:
				if in.Sf != 0 {
					r[in.Rd] = bits.ReverseBytes64(r[in.Rn])
				} else {
					r[in.Rd] = uint64(bits.ReverseBytes32(uint32(r[in.Rn])))
				}
			case decode.A64CLZ:
				if in.Sf != 0 {
					r[in.Rd] = uint64(bits.LeadingZeros64(r[in.Rn]))
				} else {
					r[in.Rd] = uint64(bits.LeadingZeros32(uint32(r[in.Rn])))
				}
			case decode.A64CLS:
				r[in.Rd] = cls(r[in.Rn], in.Sf)

			// Loads and stores. Registers are written only after every
			// access of the instruction succeeded (precise faults).
			case decode.A64LDRB:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load8(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(v)
			case decode.A64LDRH:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load16(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(v)
			case decode.A64LDRW:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load32(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(v)
			case decode.A64LDRX:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load64(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = v
			case decode.A64LDRSB:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load8(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(int64(int8(v))) & wmask(in.Sf)
			case decode.A64LDRSH:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load16(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(int64(int16(v))) & wmask(in.Sf)
			case decode.A64LDRSW:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load32(addr)
				if !ok {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
				r[in.Rd] = uint64(int64(int32(v)))
			case decode.A64STRB:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.tlb.Store8(addr, uint8(r[in.Rd])) {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
			case decode.A64STRH:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.tlb.Store16(addr, uint16(r[in.Rd])) {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
			case decode.A64STRW:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.tlb.Store32(addr, uint32(r[in.Rd])) {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
			case decode.A64STRX:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.tlb.Store64(addr, r[in.Rd]) {
					goto fault
				}
				if in.Flags != 0 {
					writeback(in, r, addr)
				}
			case decode.A64LDRV:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				lo, hi, ok := c.loadV(addr, in.Size)
				if !ok {
					goto fault
				}
				writeback(in, r, addr)
				c.regs.V[in.Rd] = [2]uint64{lo, hi}
			case decode.A64STRV:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.storeV(addr, c.regs.V[in.Rd][0], c.regs.V[in.Rd][1], in.Size) {
					goto fault
				}
				writeback(in, r, addr)
			case decode.A64LDP:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				var a, b uint64
				if in.Size == 3 {
					var ok bool
					if a, b, ok = c.tlb.Load128(addr); !ok { // one probe (Load64 twice across pages)
						goto fault
					}
				} else {
					v, ok := c.tlb.Load64(addr)
					if !ok {
						goto fault
					}
					a, b = v&0xffffffff, v>>32
				}
				writeback(in, r, addr)
				r[in.Rd] = a
				r[in.Ra] = b
			case decode.A64LDPSW:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				v, ok := c.tlb.Load64(addr)
				if !ok {
					goto fault
				}
				writeback(in, r, addr)
				r[in.Rd] = uint64(int64(int32(v)))
				r[in.Ra] = uint64(int64(v) >> 32)
			case decode.A64STP:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.stp(addr, r[in.Rd], r[in.Ra], in.Size) {
					goto fault
				}
				writeback(in, r, addr)
			case decode.A64LDPV:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.ldpV(in, addr) {
					goto fault
				}
				writeback(in, r, addr)
			case decode.A64STPV:
				addr = r[in.Rn] + in.Imm
				if in.Flags != 0 {
					addr = ea(in, r, pc)
				}
				if !c.stpV(in, addr) {
					goto fault
				}
				writeback(in, r, addr)
			case decode.A64PRFM, decode.A64NOP:
			case decode.A64LDXR:
				var v uint64
				if v, res = c.ldxr(r[in.Rn], in.Size); res != memOK {
					goto memExit
				}
				r[in.Rd] = v
			case decode.A64STXR:
				var st uint64
				if st, res = c.stxr(r[in.Rn], r[in.Rd], in.Size); res != memOK {
					goto memExit
				}
				r[in.Ra] = st
			case decode.A64LDXP:
				var a, b uint64
				if a, b, res = c.ldxp(r[in.Rn], in.Size); res != memOK {
					goto memExit
				}
				r[in.Rd] = a
				r[in.Ra] = b
			case decode.A64STXP:
				var st uint64
				if st, res = c.stxp(r[in.Rn], r[in.Rd], r[in.Ra], in.Size); res != memOK {
					goto memExit
				}
				r[in.Rm] = st
			case decode.A64LDAR:
				var v uint64
				if v, res = c.ldar(r[in.Rn], in.Size); res != memOK {
					goto memExit
				}
				r[in.Rd] = v
			case decode.A64STLR:
				if res = c.stlr(r[in.Rn], r[in.Rd], in.Size); res != memOK {
					goto memExit
				}
			case decode.A64LDOP:
				var v uint64
				if v, res = c.ldop(in.Imm, r[in.Rn], r[in.Rm], in.Size); res != memOK {
					goto memExit
				}
				r[in.Rd] = v
			case decode.A64CAS:
				var v uint64
				if v, res = c.cas(r[in.Rn], r[in.Rm], r[in.Rd], in.Size); res != memOK {
					goto memExit
				}
				r[in.Ra] = v
			case decode.A64CASP:
				var a, b uint64
				if a, b, res = c.casp(r[in.Rn], r[in.Rm], r[in.Ra], r[in.Rd], r[in.Shift], in.Size); res != memOK {
					goto memExit
				}
				r[in.Imm] = a
				r[in.Imm2] = b
			case decode.A64LDAPUR:
				var v uint64
				if v, res = c.ldar(r[in.Rn]+in.Imm, in.Size); res != memOK {
					goto memExit
				}
				r[in.Rd] = ldapurExt(in, v)
			case decode.A64STLUR:
				if res = c.stlr(r[in.Rn]+in.Imm, r[in.Rd], in.Size); res != memOK {
					goto memExit
				}
			case decode.A64FLAGM:
				nzcv = flagm(in, r[in.Rn], nzcv)

			// Branches.
			case decode.A64B:
				c.n += (pc-c.blockStart)>>2 + 1
				pc += in.Imm
				continue block
			case decode.A64BL:
				r[30] = pc + 4
				c.n += (pc-c.blockStart)>>2 + 1
				pc += in.Imm
				continue block
			case decode.A64BCOND:
				if condHolds(in.Cond, nzcv) {
					c.n += (pc-c.blockStart)>>2 + 1
					pc += in.Imm
					continue block
				}
			case decode.A64CBZ:
				if r[in.Rd]&wmask(in.Sf) == 0 {
					c.n += (pc-c.blockStart)>>2 + 1
					pc += in.Imm
					continue block
				}
			case decode.A64CBNZ:
				if r[in.Rd]&wmask(in.Sf) != 0 {
					c.n += (pc-c.blockStart)>>2 + 1
					pc += in.Imm
					continue block
				}
			case decode.A64TBZ:
				if r[in.Rd]>>in.Amount&1 == 0 {
					c.n += (pc-c.blockStart)>>2 + 1
					pc += in.Imm
					continue block
				}
			case decode.A64TBNZ:
				if r[in.Rd]>>in.Amount&1 != 0 {
					c.n += (pc-c.blockStart)>>2 + 1
					pc += in.Imm
					continue block
				}
			case decode.A64BR, decode.A64RET:
				c.n += (pc-c.blockStart)>>2 + 1
				pc = r[in.Rn]
				continue block
			case decode.A64BLR:
				t := r[in.Rn]
				r[30] = pc + 4
				c.n += (pc-c.blockStart)>>2 + 1
				pc = t
				continue block

			// System.
			case decode.A64SVC:
				c.n += (pc-c.blockStart)>>2 + 1
				exit = vm.Exit{Reason: vm.ExitSyscall, PC: pc + 4}
				if c.trap != nil { // the kernel's fast path (fastTrap)
					var act vm.TrapAction
					if act, pc, nzcv = c.fastTrap(exit.Reason, exit.PC, 0, pc, nzcv); act == vm.TrapResume {
						continue block // whose head checks the page again
					} else if act == vm.TrapLeave {
						exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
					}
				}
				goto done
			case decode.A64BRK:
				c.n += (pc - c.blockStart) >> 2
				exit = vm.Exit{Reason: vm.ExitBreakpoint, PC: pc, Code: uint32(in.Imm)}
				if c.trap != nil {
					var act vm.TrapAction
					if act, pc, nzcv = c.fastTrap(exit.Reason, exit.PC, exit.Code, pc, nzcv); act == vm.TrapResume {
						continue block
					} else if act == vm.TrapLeave {
						exit = vm.Exit{Reason: vm.ExitBudget, PC: pc}
					}
				}
				goto done
			case decode.A64CLREX:
				c.excl.valid = false
			case decode.A64DMB:
				c.barrier()
			case decode.A64ISB:
				c.n += (pc-c.blockStart)>>2 + 1
				pc += 4
				continue block
			case decode.A64MRS:
				r[in.Rd] = c.mrs(in.Imm, nzcv, pc)
			case decode.A64MSR:
				if in.Imm == decode.A64SysNZCV {
					nzcv = r[in.Rd] >> 28 & 15
				} else {
					c.msr(in.Imm, r[in.Rd])
				}
			case decode.A64DCZVA:
				addr = r[in.Rd] &^ (DCZVASize - 1)
				if !c.tlb.StoreBytes(addr, zeroBlock[:]) {
					goto fault
				}
			case decode.A64DCCVA:
				addr = r[in.Rd]
				if _, ok := c.tlb.Load8(addr); !ok {
					goto fault
				}
			case decode.A64ICIVAU:
				addr = r[in.Rd]
				if _, ok := c.tlb.Load8(addr); !ok {
					goto fault
				}
				c.cache.Invalidate(addr)
				c.l0[addr>>vm.PageShift&(l0Size-1)] = nil
				pg = nil
				c.n += (pc-c.blockStart)>>2 + 1
				pc += 4
				continue block
			case decode.A64Undefined:
				c.n += (pc - c.blockStart) >> 2
				exit = undefinedExit(pc, in.Raw, decode.A64UndefinedMessage(in, pc))
				goto done
			default:
				if in.Op < decode.A64SIMDBase {
					c.n += (pc - c.blockStart) >> 2
					exit = undefinedExit(pc, in.Raw, "uvm: integer op without an implementation: "+in.Op.String())
					goto done
				}
				if in.Op == decode.A64VLDR && in.Imm2&0xff == 1 { // LD1R, one register
					if !c.ld1r(in) {
						goto fault
					}
					break
				}
				if isSIMDHot(in.Op) && c.regs.execSIMDHot(in) { // simdhot.go
					break
				}
				c.regs.PC = pc
				c.regs.NZCV = nzcv << 28
				switch c.execSIMD(in) {
				case simdOK:
					nzcv = c.regs.NZCV >> 28 & 15
				case simdFault:
					goto fault
				default:
					c.n += (pc - c.blockStart) >> 2
					exit = undefinedExit(pc, in.Raw, "unimplemented FP/SIMD instruction: "+decode.DisasmA64(in.Raw, pc))
					goto done
				}
			}
			pc += 4
		}
		c.n += (pc - c.blockStart) >> 2
	}

memExit:
	if res == memAlign {
		c.n += (pc - c.blockStart) >> 2
		exit = vm.Exit{Reason: vm.ExitAlignment, PC: pc, Fault: c.tlb.Fault}
		goto done
	}
fault:
	c.n += (pc - c.blockStart) >> 2
	exit = vm.Exit{Reason: vm.ExitFault, PC: pc, Fault: c.tlb.Fault}

done:
	c.regs.PC = exit.PC
	c.regs.NZCV = nzcv << 28
	c.retired += c.n
	switch exit.Reason {
	case vm.ExitBudget, vm.ExitStep:
	default:
		// Exception entry clears the local exclusive monitor.
		c.excl.valid = false
	}
	return exit
}

// fastTrap is the kernel's fast path (vm.TrapHandler) for the SVC or BRK
// at pc, whose exit Run would return: unless this is a step, the
// instruction used up the budget or the cache model is on, it calls the
// handler with the state Run's return would leave (PC and NZCV stored,
// this call's instructions retired, the exclusive monitor cleared as by
// exception entry, TLB outside guest execution), resynchronises the TLB
// and returns the handler's answer with the PC and NZCV to go on with
// (unchanged with TrapExit when it did not call it).
//
//go:noinline
func (c *CPU) fastTrap(reason vm.ExitReason, exitPC uint64, code uint32, pc, nzcv uint64) (vm.TrapAction, uint64, uint64) {
	if c.step || c.n >= c.limit || c.cm != nil {
		return vm.TrapExit, pc, nzcv
	}
	c.regs.PC = exitPC
	c.regs.NZCV = nzcv << 28
	c.retired += c.n
	c.limit -= c.n
	c.n = 0
	c.excl.valid = false
	// A step the handler makes reuses the run state in c: keep this
	// call's, less what the steps retired.
	limit, step, r0 := c.limit, c.step, c.retired
	c.tlb.Leave()
	act := c.trap.Trap(reason, exitPC, code, limit)
	c.tlb.Enter()
	c.limit, c.step, c.n = limit-min(c.retired-r0, limit), step, 0
	if act == vm.TrapExit {
		return act, exitPC, c.regs.NZCV >> 28 & 15
	}
	return act, c.regs.PC, c.regs.NZCV >> 28 & 15
}

// SetTrapHandler installs the kernel's fast path for SVC and BRK (nil
// removes it).
func (c *CPU) SetTrapHandler(h vm.TrapHandler) { c.trap = h }

func undefinedExit(pc uint64, raw uint32, why string) vm.Exit {
	e := vm.Exit{Reason: vm.ExitUndefined, PC: pc, RawLen: 4, Why: why}
	e.Raw[0], e.Raw[1], e.Raw[2], e.Raw[3] = byte(raw), byte(raw>>8), byte(raw>>16), byte(raw>>24)
	return e
}
