package amd64

import (
	"encoding/binary"

	"github.com/uvm-emu/uvm/internal/decode"
)

// XSAVE state management and the CPU model's AVX switch.
//
// uvm's XSAVE area (CPUID leaf 0xD) has the x87 (0), SSE (1) and AVX (2)
// components: the 512-byte legacy region in FXSAVE layout, the 64-byte
// XSAVE header at 512 (XSTATE_BV at 512, XCOMP_BV at 520) and the upper
// YMM halves (YMM_Hi128) at 576, 256 bytes: 832 in all, in both the
// standard and the compacted format (AVX is the first extended component
// either way). XCR0 is x87|SSE|AVX = 7 and cannot be changed from user
// mode. uvm does not track XINUSE: every requested component is reported
// in use (XSTATE_BV bit set), which the architecture allows.

const (
	// XCR0 is the value XGETBV(0) returns with the x86-64-v3 model.
	XCR0 = 7
	// XSaveSize is the size of uvm's XSAVE area (standard and compacted).
	XSaveSize = 832
	// XSaveAVXOffset is the offset of the AVX component (YMM_Hi128).
	XSaveAVXOffset = 576
	xsaveHeader    = 512
)

// SetCPUModel selects the CPU model: "x86-64-v2" (SSE4.2, no AVX;
// VEX-encoded instructions and XGETBV/XSAVE raise #UD) or "x86-64-v3" (""
// too, the default: AVX, AVX2, FMA, F16C, XSAVE/XSAVEOPT/XSAVEC with
// OSXSAVE). A CPU from NewCPU is x86-64-v2 until this is called. It
// reports false for an unknown name. Set it before the CPU
// runs; threads of one process share a model.
func (c *CPU) SetCPUModel(name string) bool {
	switch name {
	case "x86-64-v2":
		c.avx = false
	case "x86-64-v3", "":
		c.avx = true
	default:
		return false
	}
	return true
}

// AVX reports whether the CPU model has AVX (x86-64-v3).
func (c *CPU) AVX() bool { return c.avx }

// CPU model bits in CPUID for x86-64-v3.
const (
	cpuidFMA     = 1 << 12
	cpuidXSAVE   = 1 << 26
	cpuidOSXSAVE = 1 << 27
	cpuidAVX     = 1 << 28
	cpuidF16C    = 1 << 29
	cpuid7AVX2   = 1 << 5 // leaf 7 EBX
)

// cpuidModel is cpuid for this CPU's model: the x86-64-v3 model adds AVX,
// AVX2, FMA, F16C, XSAVE and OSXSAVE, and leaf 0xD.
func (c *CPU) cpuidModel(eax, ecx uint32) (a, b, cc, d uint32) {
	if !c.avx {
		return cpuid(eax, ecx)
	}
	const maxBasic = 0xD
	if eax > maxBasic && eax < 0x80000000 {
		eax = maxBasic
	}
	switch eax {
	case 0:
		_, b, cc, d = cpuid(0, ecx)
		return maxBasic, b, cc, d
	case 1:
		a, b, cc, d = cpuid(1, ecx)
		return a, b, cc | cpuidFMA | cpuidXSAVE | cpuidOSXSAVE | cpuidAVX | cpuidF16C, d
	case 7:
		a, b, cc, d = cpuid(7, ecx)
		if ecx == 0 {
			b |= cpuid7AVX2
		}
		return a, b, cc, d
	case 8, 9, 0xA, 0xB, 0xC:
		return 0, 0, 0, 0
	case 0xD:
		switch ecx {
		case 0: // XCR0-supported components, size for XCR0, max size
			return XCR0, XSaveSize, XSaveSize, 0
		case 1: // XSAVEOPT, XSAVEC; size of the compacted area for XCR0
			return 1<<0 | 1<<1, XSaveSize, 0, 0
		case 2: // AVX: size, offset in the standard format
			return 256, XSaveAVXOffset, 0, 0
		}
		return 0, 0, 0, 0
	}
	return cpuid(eax, ecx)
}

// xgetbv is XGETBV: ECX 0 reads XCR0; any other ECX is #GP.
func (c *CPU) xgetbv() sseResult {
	g := &c.regs.GPR
	if uint32(g[1]) != 0 {
		return sseGP
	}
	g[0], g[2] = XCR0, 0
	return sseOK
}

// xsaveRFBM is the requested-feature bitmap EDX:EAX & XCR0.
func (c *CPU) xsaveRFBM() uint64 {
	return (c.regs.GPR[2]<<32 | uint64(uint32(c.regs.GPR[0]))) & XCR0
}

// XSave writes the components in rfbm to the XSAVE image b (standard
// format unless compact) the way XSAVE/XSAVEC does: components not in
// rfbm, and the bytes of the legacy region that belong to none, keep
// their contents (the caller supplies the old image).
func (r *Regs) XSave(b *[XSaveSize]byte, rfbm uint64, compact bool) {
	var fx [512]byte
	r.FXSave(&fx)
	if rfbm&1 != 0 {
		copy(b[0:24], fx[0:24])
		copy(b[32:160], fx[32:160])
	}
	if rfbm&6 != 0 {
		copy(b[24:32], fx[24:32]) // MXCSR, MXCSR_MASK
	}
	if rfbm&2 != 0 {
		copy(b[160:416], fx[160:416])
	}
	if rfbm&4 != 0 {
		for i := range 16 {
			putLE64(b[XSaveAVXOffset+16*i:], r.YMMH[i][0])
			putLE64(b[XSaveAVXOffset+16*i+8:], r.YMMH[i][1])
		}
	}
	le := binary.LittleEndian
	if compact {
		clear(b[xsaveHeader : xsaveHeader+64])
		le.PutUint64(b[xsaveHeader:], rfbm)
		le.PutUint64(b[xsaveHeader+8:], 1<<63|XCR0&rfbm)
		return
	}
	bv := le.Uint64(b[xsaveHeader:])
	le.PutUint64(b[xsaveHeader:], bv&^rfbm|rfbm)
}

// XRestore loads the components in rfbm from the XSAVE image b as XRSTOR
// does; components whose XSTATE_BV bit is clear are set to their initial
// state. It returns false (changing nothing) where XRSTOR raises #GP: a
// malformed header or reserved MXCSR bits.
func (r *Regs) XRestore(b *[XSaveSize]byte, rfbm uint64) bool {
	le := binary.LittleEndian
	bv := le.Uint64(b[xsaveHeader:])
	comp := le.Uint64(b[xsaveHeader+8:])
	if comp&(1<<63) != 0 {
		if comp&^(1<<63)&^XCR0 != 0 || bv&^comp != 0 {
			return false
		}
		for i := 16; i < 64; i++ {
			if b[xsaveHeader+i] != 0 {
				return false
			}
		}
	} else {
		if bv&^XCR0 != 0 {
			return false
		}
		for i := 8; i < 24; i++ {
			if b[xsaveHeader+i] != 0 {
				return false
			}
		}
	}
	mx := le.Uint32(b[24:])
	loadMX := rfbm&6 != 0 && (comp&(1<<63) == 0 || bv&6 != 0)
	if loadMX && mx&^MXCSRMask != 0 {
		return false
	}
	var fx [512]byte
	r.FXSave(&fx)
	if rfbm&1 != 0 {
		if bv&1 != 0 {
			copy(fx[0:24], b[0:24])
			copy(fx[32:160], b[32:160])
		} else {
			clear(fx[0:24])
			clear(fx[32:160])
			le.PutUint16(fx[0:], 0x37F)
		}
	}
	if rfbm&2 != 0 {
		if bv&2 != 0 {
			copy(fx[160:416], b[160:416])
		} else {
			clear(fx[160:416])
		}
	}
	if loadMX {
		le.PutUint32(fx[24:], mx)
	} else if rfbm&6 != 0 {
		le.PutUint32(fx[24:], MXCSRDefault)
	}
	r.FXRestore(&fx)
	if rfbm&4 != 0 {
		for i := range 16 {
			if bv&4 != 0 {
				r.YMMH[i] = vec{le.Uint64(b[XSaveAVXOffset+16*i:]), le.Uint64(b[XSaveAVXOffset+16*i+8:])}
			} else {
				r.YMMH[i] = vec{}
			}
		}
	}
	return true
}

// xsave executes XSAVE/XSAVEOPT (standard format) and XSAVEC
// (compacted): the area must be 64-byte aligned.
func (c *CPU) xsave(in *decode.X86) sseResult {
	addr := c.ea(in, &in.Args[0])
	if addr&63 != 0 {
		return sseGP
	}
	var b [XSaveSize]byte
	if !c.tlb.LoadBytes(addr, b[:]) {
		return sseFault
	}
	c.regs.XSave(&b, c.xsaveRFBM(), in.Op == decode.X86Xsavec)
	if !c.tlb.StoreBytes(addr, b[:]) {
		return sseFault
	}
	return sseOK
}

// xrstor executes XRSTOR (either format).
func (c *CPU) xrstor(in *decode.X86) sseResult {
	addr := c.ea(in, &in.Args[0])
	if addr&63 != 0 {
		return sseGP
	}
	var b [XSaveSize]byte
	if !c.tlb.LoadBytes(addr, b[:]) {
		return sseFault
	}
	if !c.regs.XRestore(&b, c.xsaveRFBM()) {
		return sseGP
	}
	return sseOK
}
