package amd64

import (
	"fmt"

	"github.com/uvm-emu/uvm/internal/decode"
)

// TraceLine formats the register state like shared/tools/qemu-trace:
//
//	pc=… rax=… rbx=… rcx=… rdx=… rsi=… rdi=… rbp=… rsp=… r8=… … r15=… flags=…
//
// in lower-case hex without 0x, flags masked to CF PF AF ZF SF OF DF
// (0xcd5).
func (c *CPU) TraceLine() string {
	g := &c.regs.GPR
	return fmt.Sprintf("pc=%x rax=%x rbx=%x rcx=%x rdx=%x rsi=%x rdi=%x rbp=%x rsp=%x "+
		"r8=%x r9=%x r10=%x r11=%x r12=%x r13=%x r14=%x r15=%x flags=%x",
		c.regs.RIP, g[0], g[3], g[1], g[2], g[6], g[7], g[5], g[4],
		g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], c.rflags()&0xcd5)
}

// Disasm disassembles the instruction at pc (Intel syntax).
func (c *CPU) Disasm(pc uint64) string {
	var buf [15]byte
	n := 0
	for ; n < len(buf); n++ {
		if c.mm.Peek(buf[n:n+1], pc+uint64(n)) != nil {
			break
		}
	}
	if n == 0 {
		return "(unmapped)"
	}
	return decode.DisasmX86(buf[:n], pc)
}
