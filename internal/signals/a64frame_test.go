package signals

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testARM64Context() *ARM64Context {
	ctx := &ARM64Context{
		SP:           0x40001238, // deliberately not 16-aligned
		PC:           0x400abc,
		PState:       0x60001000, // Z, C, SSBS
		FPSR:         0x08000010,
		FPCR:         0x03c00000,
		FaultAddress: 0xdead0000,
		ESR:          0x92000047,
	}
	for i := range ctx.X {
		ctx.X[i] = 0x1000 + uint64(i)
	}
	for i := range ctx.V {
		ctx.V[i] = [2]uint64{0x0101010101010101 * uint64(i), ^uint64(i)}
	}
	return ctx
}

// TestARM64FrameGolden checks every field at the offset the kernel's
// structs give (arch/arm64/include/uapi/asm/{sigcontext,ucontext}.h,
// struct rt_sigframe { siginfo info; ucontext uc; } + frame_record).
func TestARM64FrameGolden(t *testing.T) {
	ctx := testARM64Context()
	info := FaultInfo(SIGSEGV, SEGV_MAPERR, 0xdead0000)
	blocked := SIGUSR1.Mask() | SIGRTMAX.Mask()
	act := SigAction{Handler: 0x401000, Flags: SA_SIGINFO | SA_RESTORER, Restorer: 0x402000}
	alt := StackT{SP: 0x9000, Flags: SS_AUTODISARM, Size: 0x3000}

	f, err := BuildARM64Frame(ctx, &info, blocked, act, alt)
	require.NoError(t, err)
	// sp 0x40001238 → frame record at round_down(sp-16, 16) = 0x40001220,
	// rt_sigframe (4688 = 0x1250 bytes) below it.
	assert.Equal(t, uint64(0x40001220), f.FrameRecord)
	assert.Equal(t, uint64(0x3fffffd0), f.Addr)
	assert.Equal(t, f.Addr, f.InfoAddr)
	assert.Equal(t, f.Addr+128, f.UCAddr)
	assert.False(t, f.OnAltStack)
	b := f.Bytes
	require.Len(t, b, 4688+16)

	// siginfo @0
	assert.Equal(t, uint32(11), u32(b, 0))
	assert.Equal(t, uint32(1), u32(b, 8))
	assert.Equal(t, uint64(0xdead0000), u64(b, 16))
	// ucontext @128: uc_flags, uc_link, uc_stack{ss_sp, ss_flags, ss_size}, uc_sigmask
	assert.Equal(t, uint64(0), u64(b, 128))
	assert.Equal(t, uint64(0), u64(b, 136))
	assert.Equal(t, uint64(0x9000), u64(b, 144))
	assert.Equal(t, uint32(0x80000000), u32(b, 152))
	assert.Equal(t, uint64(0x3000), u64(b, 160))
	assert.Equal(t, uint64(blocked), u64(b, 168))
	for i := 176; i < 304; i++ { // __unused[120] and alignment padding
		require.Zero(t, b[i], "byte %d", i)
	}
	// sigcontext @304 (uc + 176)
	assert.Equal(t, uint64(0xdead0000), u64(b, 304)) // fault_address
	for i := 0; i < 31; i++ {
		assert.Equal(t, 0x1000+uint64(i), u64(b, 312+8*i), "regs[%d]", i)
	}
	assert.Equal(t, uint64(0x40001238), u64(b, 560)) // sp
	assert.Equal(t, uint64(0x400abc), u64(b, 568))   // pc
	assert.Equal(t, uint64(0x60001000), u64(b, 576)) // pstate
	// __reserved @592: fpsimd_context
	assert.Equal(t, uint32(0x46508001), u32(b, 592))
	assert.Equal(t, uint32(0x210), u32(b, 596))
	assert.Equal(t, uint32(0x08000010), u32(b, 600))
	assert.Equal(t, uint32(0x03c00000), u32(b, 604))
	for i := 0; i < 32; i++ {
		assert.Equal(t, 0x0101010101010101*uint64(i), u64(b, 608+16*i), "v%d lo", i)
		assert.Equal(t, ^uint64(i), u64(b, 616+16*i), "v%d hi", i)
	}
	// esr_context @592+0x210
	assert.Equal(t, uint32(0x45535201), u32(b, 1120))
	assert.Equal(t, uint32(16), u32(b, 1124))
	assert.Equal(t, uint64(0x92000047), u64(b, 1128))
	// terminator and the rest of __reserved
	for i := 1136; i < 4688; i++ {
		require.Zero(t, b[i], "byte %d", i)
	}
	// frame record {fp, lr}
	assert.Equal(t, uint64(0x1000+29), u64(b, 4688))
	assert.Equal(t, uint64(0x1000+30), u64(b, 4696))

	// Handler entry registers.
	h := *ctx
	h.PState |= 1 << 25 // TCO is cleared on entry
	h.EnterHandler(SIGSEGV, act, f, 0xfff000)
	assert.Equal(t, uint64(11), h.X[0])
	assert.Equal(t, f.Addr, h.X[1])
	assert.Equal(t, f.Addr+128, h.X[2])
	assert.Equal(t, uint64(0x40001220), h.X[29])
	assert.Equal(t, uint64(0x402000), h.X[30])
	assert.Equal(t, f.Addr, h.SP)
	assert.Equal(t, uint64(0x401000), h.PC)
	assert.Equal(t, uint64(0x60001000), h.PState)
	assert.Equal(t, ctx.V, h.V)

	// Without SA_RESTORER: the vDSO trampoline; without SA_SIGINFO, x1/x2 kept.
	h = *ctx
	h.EnterHandler(SIGSEGV, SigAction{Handler: 0x401000}, f, 0xfff000)
	assert.Equal(t, uint64(0xfff000), h.X[30])
	assert.Equal(t, uint64(0x1001), h.X[1])
	assert.Equal(t, uint64(0x1002), h.X[2])
}

func TestARM64FrameNoESRNoInfo(t *testing.T) {
	ctx := testARM64Context()
	ctx.ESR = 0
	info := KillInfo(SIGUSR1, SI_USER, 5, 6)
	f, err := BuildARM64Frame(ctx, &info, 0, SigAction{Handler: 0x401000}, DisabledStack)
	require.NoError(t, err)
	b := f.Bytes
	for i := 0; i < 128; i++ {
		require.Zero(t, b[i], "siginfo is only copied with SA_SIGINFO")
	}
	assert.Equal(t, uint32(2), u32(b, 152), "uc_stack.ss_flags = SS_DISABLE")
	// terminator right after fpsimd_context
	assert.Equal(t, uint64(0), u64(b, 1120))
	for i := 1120; i < 4688; i++ {
		require.Zero(t, b[i])
	}
}

func TestARM64FrameAltStack(t *testing.T) {
	ctx := testARM64Context()
	alt := StackT{SP: 0x7000_0000, Size: 0x10000}
	act := SigAction{Handler: 0x401000, Flags: SA_ONSTACK}
	f, err := BuildARM64Frame(ctx, nil, 0, act, alt)
	require.NoError(t, err)
	assert.True(t, f.OnAltStack)
	assert.Equal(t, uint64(0x7001_0000-16), f.FrameRecord)
	assert.Equal(t, uint64(0x7001_0000-16-4688), f.Addr)
	assert.Equal(t, uint64(0x40001238), u64(f.Bytes, 560), "sigcontext.sp is the interrupted sp")

	// Nested: already on the altstack, the frame goes below the current sp.
	ctx.SP = 0x7000_8000
	f, err = BuildARM64Frame(ctx, nil, 0, act, alt)
	require.NoError(t, err)
	assert.True(t, f.OnAltStack)
	assert.Equal(t, uint64(0x7000_8000-16), f.FrameRecord)

	ctx.SP = 0x100
	_, err = BuildARM64Frame(ctx, nil, 0, SigAction{Handler: 1}, DisabledStack)
	assert.ErrorIs(t, err, ErrFrameAddress)
}

func TestARM64RoundTrip(t *testing.T) {
	ctx := testARM64Context()
	alt := StackT{SP: 0x9000, Flags: SS_ONSTACK, Size: 0x3000}
	f, err := BuildARM64Frame(ctx, nil, SIGUSR2.Mask(), SigAction{Handler: 0x401000, Flags: SA_SIGINFO}, alt)
	require.NoError(t, err)

	// Without changes the frame restores the interrupted state (except
	// the fault fields, which belong to the thread, not the registers).
	cur := *ctx
	cur.EnterHandler(SIGUSR1, SigAction{Handler: 0x401000}, f, 0xfff000)
	cur.FaultAddress, cur.ESR = 1, 2
	got, blocked, gotAlt, err := ParseARM64Frame(f.Bytes[:ARM64FrameSize], &cur)
	require.NoError(t, err)
	want := *ctx
	want.FaultAddress, want.ESR = 1, 2
	assert.Equal(t, want, got)
	assert.Equal(t, SIGUSR2.Mask(), blocked)
	assert.Equal(t, alt, gotAlt)

	// A "handler" edits the ucontext: x0, pc, sp, pstate flags, v7, fpcr,
	// the mask (SIGKILL cannot be blocked) and the altstack.
	b := append([]byte(nil), f.Bytes...)
	le := binary.LittleEndian
	le.PutUint64(b[312:], 0xabcdef)                                             // regs[0]
	le.PutUint64(b[568:], 0x400ff0)                                             // pc
	le.PutUint64(b[560:], 0x50000000)                                           // sp
	le.PutUint64(b[576:], 0x80000000)                                           // pstate: N
	le.PutUint64(b[608+16*7:], 0x7777)                                          // v7 lo
	le.PutUint32(b[604:], 0x01000000)                                           // fpcr
	le.PutUint64(b[168:], uint64(SIGHUP.Mask()|SIGKILL.Mask()|SIGRTMAX.Mask())) // uc_sigmask
	le.PutUint64(b[144:], 0xa000)                                               // ss_sp
	le.PutUint64(b[160:], 0x8000)                                               // ss_size
	got, blocked, gotAlt, err = ParseARM64Frame(b, &cur)
	require.NoError(t, err)
	assert.Equal(t, uint64(0xabcdef), got.X[0])
	assert.Equal(t, uint64(0x400ff0), got.PC)
	assert.Equal(t, uint64(0x50000000), got.SP)
	assert.Equal(t, uint64(0x80000000), got.PState)
	assert.Equal(t, [2]uint64{0x7777, ^uint64(7)}, got.V[7])
	assert.Equal(t, uint32(0x01000000), got.FPCR)
	assert.Equal(t, SIGHUP.Mask()|SIGRTMAX.Mask(), blocked)
	assert.Equal(t, StackT{SP: 0xa000, Flags: SS_ONSTACK, Size: 0x8000}, gotAlt)

	// RES0 bits are dropped silently.
	le.PutUint64(b[576:], 0x80000000|1<<40|1<<5)
	got, _, _, err = ParseARM64Frame(b, &cur)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x80000000), got.PState)

	// The esr_context is accepted and ignored.
	ctx.ESR = 0x1234
	f, err = BuildARM64Frame(ctx, nil, 0, SigAction{Handler: 1}, DisabledStack)
	require.NoError(t, err)
	_, _, _, err = ParseARM64Frame(f.Bytes, nil)
	require.NoError(t, err)
}

func TestARM64ParseErrors(t *testing.T) {
	ctx := testARM64Context()
	ctx.ESR = 0
	f, err := BuildARM64Frame(ctx, nil, SIGUSR2.Mask(), SigAction{Handler: 1}, DisabledStack)
	require.NoError(t, err)
	base := f.Bytes[:ARM64FrameSize]
	le := binary.LittleEndian
	edit := func(fn func(b []byte)) []byte {
		b := append([]byte(nil), base...)
		fn(b)
		return b
	}
	cases := map[string][]byte{
		"short":         base[:ARM64FrameSize-1],
		"EL1h":          edit(func(b []byte) { le.PutUint64(b[576:], 0x5) }),
		"AArch32":       edit(func(b []byte) { le.PutUint64(b[576:], 0x10) }),
		"IRQ masked":    edit(func(b []byte) { le.PutUint64(b[576:], 0x80) }),
		"no fpsimd":     edit(func(b []byte) { le.PutUint64(b[592:], 0) }),
		"fpsimd size":   edit(func(b []byte) { le.PutUint32(b[596:], 0x220) }),
		"terminator":    edit(func(b []byte) { le.PutUint32(b[1124:], 16) }),
		"unknown magic": edit(func(b []byte) { le.PutUint32(b[1120:], 0x12345678); le.PutUint32(b[1124:], 16) }),
		"sve":           edit(func(b []byte) { le.PutUint32(b[1120:], SVE_MAGIC); le.PutUint32(b[1124:], 16) }),
		"extra":         edit(func(b []byte) { le.PutUint32(b[1120:], EXTRA_MAGIC); le.PutUint32(b[1124:], 32) }),
		"two fpsimd":    edit(func(b []byte) { copy(b[1120:], b[592:592+528]) }),
		"misaligned":    edit(func(b []byte) { le.PutUint32(b[1120:], ESR_MAGIC); le.PutUint32(b[1124:], 24) }),
		"tiny record":   edit(func(b []byte) { le.PutUint32(b[1120:], ESR_MAGIC); le.PutUint32(b[1124:], 0) }),
		"overrun":       edit(func(b []byte) { le.PutUint32(b[1120:], ESR_MAGIC); le.PutUint32(b[1124:], 4096) }),
		"no terminator": edit(func(b []byte) { fillESR(b, 1120, 4688) }),
		"huge size":     edit(func(b []byte) { le.PutUint32(b[596:], 0xffffffff) }),
	}
	for name, b := range cases {
		cur := *ctx
		got, blocked, _, err := ParseARM64Frame(b, &cur)
		assert.ErrorIs(t, err, ErrBadFrame, name)
		if name == "short" {
			continue
		}
		// Linux has installed the mask and the registers already.
		assert.Equal(t, SIGUSR2.Mask(), blocked, name)
		assert.Equal(t, ctx.X, got.X, name)
		if name == "IRQ masked" || name == "EL1h" || name == "AArch32" {
			assert.Equal(t, uint64(0), got.PState, name+": only NZCV survive")
		}
	}

	_, _, err = ARM64SigreturnFrame(0x1008)
	assert.ErrorIs(t, err, ErrBadFrame)
	addr, n, err := ARM64SigreturnFrame(0x1000)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x1000), addr)
	assert.Equal(t, 4688, n)
}

// fillESR fills [from, to) of b with 16-byte esr_context records.
func fillESR(b []byte, from, to int) {
	for off := from; off+16 <= to; off += 16 {
		binary.LittleEndian.PutUint32(b[off:], ESR_MAGIC)
		binary.LittleEndian.PutUint32(b[off+4:], 16)
	}
}

func FuzzParseARM64Frame(f *testing.F) {
	ctx := testARM64Context()
	fr, err := BuildARM64Frame(ctx, nil, 0, SigAction{Handler: 1}, DisabledStack)
	if err != nil {
		f.Fatal(err)
	}
	valid := fr.Bytes[:ARM64FrameSize]
	f.Add([]byte{}, uint16(0), []byte{})
	f.Add(valid[:100], uint16(592), []byte{1, 0x80, 0x50, 0x46, 0x10, 2, 0, 0})
	f.Add([]byte{0}, uint16(1120), []byte{1, 0x52, 0x53, 0x45, 0xf0, 0xff, 0xff, 0xff})
	f.Add([]byte{0}, uint16(576), []byte{0x85, 0x03})
	f.Fuzz(func(t *testing.T, raw []byte, off uint16, patch []byte) {
		_, _, _, _ = ParseARM64Frame(raw, nil)
		b := append([]byte(nil), valid...)
		copy(b[int(off)%len(b):], patch)
		ctx, _, _, err := ParseARM64Frame(b, nil)
		if err == nil && ctx.PState&0x3df != 0 {
			t.Fatalf("accepted pstate %#x", ctx.PState)
		}
	})
}
