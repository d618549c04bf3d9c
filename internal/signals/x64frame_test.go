package signals

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testAMD64Context() *AMD64Context {
	ctx := &AMD64Context{
		RIP:    0x401abc,
		RFLAGS: 0x246 | 1<<10 | 1<<8 | 1<<16, // IF ZF PF + DF TF RF
		CS:     0x33,
		FS:     0x0,
		GS:     0x0,
		SS:     0x2b,
		Err:    6,
		Trapno: 14,
		CR2:    0xdead0000,
	}
	for i := range ctx.GPR {
		ctx.GPR[i] = 0x100 + uint64(i)
	}
	ctx.GPR[RSP] = 0x40001238
	ctx.FXSave = AMD64InitFXSave()
	binary.LittleEndian.PutUint16(ctx.FXSave[0:], 0x27f)       // FCW
	binary.LittleEndian.PutUint32(ctx.FXSave[24:], 0x1fa0)     // MXCSR
	binary.LittleEndian.PutUint64(ctx.FXSave[160:], 0x3ff0000) // XMM0 lo
	binary.LittleEndian.PutUint64(ctx.FXSave[400:], 0x1515)    // XMM15 lo
	return ctx
}

// TestAMD64FrameGolden checks every field at the offset the kernel's
// structs give (arch/x86/include/asm/sigframe.h rt_sigframe,
// asm-generic ucontext, x86 uapi sigcontext and _fpstate_64).
func TestAMD64FrameGolden(t *testing.T) {
	ctx := testAMD64Context()
	info := FaultInfo(SIGSEGV, SEGV_ACCERR, 0xdead0000)
	blocked := SIGUSR1.Mask() | SIGRTMAX.Mask()
	act := SigAction{Handler: 0x401000, Flags: SA_SIGINFO | SA_RESTORER, Restorer: 0x402000}
	alt := StackT{SP: 0x9000, Flags: SS_DISABLE}

	f, err := BuildAMD64Frame(ctx, &info, blocked, act, alt)
	require.NoError(t, err)
	// rsp 0x40001238 - 128 = 0x400011b8; fpstate = round_down(- 512, 64) =
	// 0x40000f80; frame = round_down(fpstate - 440, 16) - 8 = 0x40000db8.
	assert.Equal(t, uint64(0x40000f80), f.FPState)
	assert.Equal(t, uint64(0x40000db8), f.Addr)
	assert.Equal(t, uint64(0), (f.Addr+8)%16, "rsp+8 is 16-aligned at handler entry")
	assert.Equal(t, f.Addr+312, f.InfoAddr)
	assert.Equal(t, f.Addr+8, f.UCAddr)
	b := f.Bytes
	require.Len(t, b, 0x40000f80+512-0x40000db8)

	assert.Equal(t, uint64(0x402000), u64(b, 0)) // pretcode
	// ucontext @8
	assert.Equal(t, uint64(6), u64(b, 8)) // UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
	assert.Equal(t, uint64(0), u64(b, 16))
	assert.Equal(t, uint64(0x9000), u64(b, 24))
	assert.Equal(t, uint32(2), u32(b, 32))
	assert.Equal(t, uint64(0), u64(b, 40))
	// sigcontext @48
	mc := 48
	regAt := map[int]int{R8: 0, R9: 8, R10: 16, R11: 24, R12: 32, R13: 40, R14: 48, R15: 56,
		RDI: 64, RSI: 72, RBP: 80, RBX: 88, RDX: 96, RAX: 104, RCX: 112, RSP: 120}
	for r, off := range regAt {
		assert.Equal(t, ctx.GPR[r], u64(b, mc+off), "gpr %d", r)
	}
	assert.Equal(t, uint64(0x401abc), u64(b, 8+0xa8)) // rip at uc+0xa8
	assert.Equal(t, uint64(0x401abc), u64(b, mc+128))
	assert.Equal(t, ctx.RFLAGS, u64(b, mc+136))
	assert.Equal(t, uint16(0x33), u16(b, mc+144))
	assert.Equal(t, uint16(0), u16(b, mc+146)) // gs
	assert.Equal(t, uint16(0), u16(b, mc+148)) // fs
	assert.Equal(t, uint16(0x2b), u16(b, mc+150))
	assert.Equal(t, uint64(6), u64(b, mc+152))  // err
	assert.Equal(t, uint64(14), u64(b, mc+160)) // trapno
	assert.Equal(t, uint64(blocked), u64(b, mc+168))
	assert.Equal(t, uint64(0xdead0000), u64(b, mc+176))
	assert.Equal(t, uint64(0x40000f80), u64(b, mc+184))
	for i := mc + 192; i < mc+256; i++ {
		require.Zero(t, b[i], "reserved1 byte %d", i)
	}
	assert.Equal(t, uint64(blocked), u64(b, 304)) // uc_sigmask
	// siginfo @312
	assert.Equal(t, uint32(11), u32(b, 312))
	assert.Equal(t, uint32(2), u32(b, 320))
	assert.Equal(t, uint64(0xdead0000), u64(b, 328))
	// fpstate @0x1c8: fxsave image plus sw_reserved
	fx := b[0x1c8:]
	require.Len(t, fx, 512)
	assert.Equal(t, ctx.FXSave[:464], fx[:464])
	assert.Equal(t, uint16(0x27f), u16(fx, 0))
	assert.Equal(t, uint32(0x1fa0), u32(fx, 24))
	assert.Equal(t, uint32(0x46505853), u32(fx, 464)) // magic1
	assert.Equal(t, uint32(516), u32(fx, 468))        // extended_size
	assert.Equal(t, uint64(0), u64(fx, 472))          // xfeatures
	assert.Equal(t, uint32(512), u32(fx, 480))        // xstate_size
	for i := 484; i < 512; i++ {
		require.Zero(t, fx[i])
	}
	// padding between the rt_sigframe and fpstate
	for i := 440; i < 0x1c8; i++ {
		require.Zero(t, b[i])
	}

	h := *ctx
	h.EnterHandler(SIGSEGV, act, f)
	assert.Equal(t, uint64(11), h.GPR[RDI])
	assert.Equal(t, f.InfoAddr, h.GPR[RSI])
	assert.Equal(t, f.UCAddr, h.GPR[RDX])
	assert.Equal(t, uint64(0), h.GPR[RAX])
	assert.Equal(t, f.Addr, h.GPR[RSP])
	assert.Equal(t, uint64(0x401000), h.RIP)
	assert.Equal(t, uint64(0x246), h.RFLAGS, "DF, TF, RF cleared")
	assert.Equal(t, uint16(0x33), h.CS)
	assert.Equal(t, uint16(0x2b), h.SS)
	assert.Equal(t, AMD64InitFXSave(), h.FXSave, "handler starts with a fresh FPU")
	assert.Equal(t, ctx.GPR[RBX], h.GPR[RBX])
}

func TestAMD64FrameSetup(t *testing.T) {
	ctx := testAMD64Context()
	_, err := BuildAMD64Frame(ctx, nil, 0, SigAction{Handler: 1}, DisabledStack)
	assert.ErrorIs(t, err, ErrNoRestorer)

	info := KillInfo(SIGUSR1, SI_USER, 1, 2)
	f, err := BuildAMD64Frame(ctx, &info, 0, SigAction{Handler: 1, Flags: SA_RESTORER}, DisabledStack)
	require.NoError(t, err)
	for i := 312; i < 440; i++ {
		require.Zero(t, f.Bytes[i], "siginfo only with SA_SIGINFO")
	}

	// Switch to the altstack: frames from its top (no red zone there).
	alt := StackT{SP: 0x7000_0000, Size: 0x10000}
	act := SigAction{Handler: 1, Flags: SA_RESTORER | SA_ONSTACK}
	f, err = BuildAMD64Frame(ctx, nil, 0, act, alt)
	require.NoError(t, err)
	assert.True(t, f.OnAltStack)
	assert.Equal(t, uint64(0x7001_0000-512), f.FPState)
	assert.Equal(t, uint64(0x7001_0000-512-448-8), f.Addr)
	assert.Equal(t, uint64(0x7000_0000), u64(f.Bytes, 24))
	assert.Equal(t, uint32(0), u32(f.Bytes, 32))
	assert.Equal(t, uint64(0x10000), u64(f.Bytes, 40))

	// Nested on the altstack: below rsp - 128, still on it.
	ctx.GPR[RSP] = 0x7000_8000
	f, err = BuildAMD64Frame(ctx, nil, 0, act, alt)
	require.NoError(t, err)
	assert.True(t, f.OnAltStack)
	assert.Equal(t, uint64(0x7000_8000-128-512), f.FPState)

	// Overflow: too close to the altstack's base.
	ctx.GPR[RSP] = 0x7000_0400
	_, err = BuildAMD64Frame(ctx, nil, 0, act, alt)
	assert.ErrorIs(t, err, ErrAltStackOverflow)
	_, err = BuildAMD64Frame(ctx, nil, 0, act, StackT{SP: 0x7000_0000, Size: 0x200})
	assert.Error(t, err)

	ctx.GPR[RSP] = 0x40
	_, err = BuildAMD64Frame(ctx, nil, 0, SigAction{Handler: 1, Flags: SA_RESTORER}, DisabledStack)
	assert.ErrorIs(t, err, ErrFrameAddress)
}

func TestAMD64RoundTrip(t *testing.T) {
	ctx := testAMD64Context()
	alt := StackT{SP: 0x9000, Flags: SS_AUTODISARM, Size: 0x3000}
	act := SigAction{Handler: 0x401000, Flags: SA_SIGINFO | SA_RESTORER, Restorer: 0x402000}
	f, err := BuildAMD64Frame(ctx, nil, SIGUSR2.Mask(), act, alt)
	require.NoError(t, err)

	// The handler runs and returns: ret pops pretcode, so the restorer's
	// rt_sigreturn syscall sees rsp = frame + 8.
	cur := *ctx
	cur.EnterHandler(SIGUSR1, act, f)
	cur.GPR[RSP] += 8
	cur.RFLAGS = 0x202 // flags at the SYSCALL
	cur.FS, cur.GS, cur.Err, cur.Trapno, cur.CR2 = 0x63, 0x6b, 0, 0, 0
	addr, n := AMD64SigreturnFrame(cur.GPR[RSP])
	require.Equal(t, f.Addr, addr)
	require.Equal(t, 440, n)

	got, blocked, gotAlt, fp, err := ParseAMD64Frame(f.Bytes[:n], &cur)
	require.NoError(t, err)
	require.Equal(t, f.FPState, fp)
	require.NoError(t, RestoreAMD64FPState(&got, fp, f.Bytes[fp-f.Addr:]))
	want := *ctx
	want.FS, want.GS, want.Err, want.Trapno, want.CR2 = 0x63, 0x6b, 0, 0, 0
	want.RFLAGS = ctx.RFLAGS // all of the saved bits are in FIX_EFLAGS or equal
	clear(want.FXSave[416:])
	assert.Equal(t, want, got)
	assert.Equal(t, SIGUSR2.Mask(), blocked)
	assert.Equal(t, alt, gotAlt)

	// A handler edits the ucontext.
	b := append([]byte(nil), f.Bytes...)
	le := binary.LittleEndian
	mc := 48
	le.PutUint64(b[mc+104:], 0x4242)                            // rax
	le.PutUint64(b[mc+128:], 0x401ff0)                          // rip
	le.PutUint64(b[mc+120:], 0x50000000)                        // rsp
	le.PutUint64(b[mc+136:], 0x1|0x200|0x3000|0x40000)          // CF, IF, IOPL, AC
	le.PutUint64(b[304:], uint64(SIGHUP.Mask()|SIGSTOP.Mask())) // uc_sigmask
	le.PutUint16(b[mc+146:], 0x99)                              // gs: not restored
	le.PutUint64(b[int(f.FPState-f.Addr)+176:], 0xfeed)         // XMM1 lo
	le.PutUint32(b[int(f.FPState-f.Addr)+24:], 0x9fc0)          // MXCSR (FZ, DAZ etc. are fine)
	cur.RFLAGS = 0x202
	got, blocked, _, fp, err = ParseAMD64Frame(b[:440], &cur)
	require.NoError(t, err)
	require.NoError(t, RestoreAMD64FPState(&got, fp, b[fp-f.Addr:]))
	assert.Equal(t, uint64(0x4242), got.GPR[RAX])
	assert.Equal(t, uint64(0x401ff0), got.RIP)
	assert.Equal(t, uint64(0x50000000), got.GPR[RSP])
	assert.Equal(t, uint64(0x2|0x200|0x1|0x40000), got.RFLAGS, "IF and IOPL from the current flags, CF and AC from the frame")
	assert.Equal(t, SIGHUP.Mask(), blocked)
	assert.Equal(t, uint16(0x6b), got.GS)
	assert.Equal(t, uint64(0xfeed), le.Uint64(got.FXSave[176:]))
	assert.Equal(t, uint32(0x9fc0), le.Uint32(got.FXSave[24:]))
	assert.Equal(t, uint32(MXCSRMask), le.Uint32(got.FXSave[28:]))
}

func TestAMD64ParseSegmentsAndFP(t *testing.T) {
	ctx := testAMD64Context()
	act := SigAction{Handler: 0x401000, Flags: SA_RESTORER, Restorer: 0x402000}
	f, err := BuildAMD64Frame(ctx, nil, 0, act, DisabledStack)
	require.NoError(t, err)
	le := binary.LittleEndian
	mc := 48

	// cs/ss are forced to RPL 3; with UC_STRICT_RESTORE_SS a bad ss stays.
	b := append([]byte(nil), f.Bytes[:440]...)
	le.PutUint16(b[mc+144:], 0x30)
	le.PutUint16(b[mc+150:], 0x0)
	got, _, _, _, err := ParseAMD64Frame(b, ctx)
	require.NoError(t, err)
	assert.Equal(t, uint16(0x33), got.CS)
	assert.Equal(t, uint16(0x3), got.SS)
	// Without it (old-style frame), an invalid ss becomes __USER_DS.
	le.PutUint64(b[8:], UC_SIGCONTEXT_SS)
	got, _, _, _, err = ParseAMD64Frame(b, ctx)
	require.NoError(t, err)
	assert.Equal(t, uint16(0x2b), got.SS)

	// fpstate NULL: the FPU is reset.
	got = *ctx
	require.NoError(t, RestoreAMD64FPState(&got, 0, nil))
	assert.Equal(t, AMD64InitFXSave(), got.FXSave)
	// Misaligned, bad MXCSR, short: bad frame, FPU reset.
	fx := f.Bytes[f.FPState-f.Addr:]
	got = *ctx
	assert.ErrorIs(t, RestoreAMD64FPState(&got, f.FPState+8, fx), ErrBadFrame)
	assert.Equal(t, AMD64InitFXSave(), got.FXSave)
	bad := append([]byte(nil), fx...)
	le.PutUint32(bad[24:], 0x10000)
	got = *ctx
	assert.ErrorIs(t, RestoreAMD64FPState(&got, f.FPState, bad), ErrBadFrame)
	assert.Equal(t, AMD64InitFXSave(), got.FXSave)
	assert.ErrorIs(t, RestoreAMD64FPState(&got, f.FPState, fx[:511]), ErrBadFrame)

	_, _, _, _, err = ParseAMD64Frame(f.Bytes[:439], ctx)
	assert.ErrorIs(t, err, ErrBadFrame)
}

func FuzzParseAMD64Frame(f *testing.F) {
	ctx := testAMD64Context()
	fr, err := BuildAMD64Frame(ctx, nil, 0, SigAction{Handler: 1, Flags: SA_RESTORER}, DisabledStack)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{}, uint16(0), []byte{}, uint64(0))
	f.Add(fr.Bytes[:200], uint16(184), []byte{8, 0, 0, 0, 0, 0, 0, 0}, fr.FPState)
	f.Add([]byte{1}, uint16(0x1c8+24), []byte{0xff, 0xff, 0xff, 0xff}, uint64(1))
	f.Fuzz(func(t *testing.T, raw []byte, off uint16, patch []byte, fp uint64) {
		_, _, _, _, _ = ParseAMD64Frame(raw, nil)
		var c AMD64Context
		_ = RestoreAMD64FPState(&c, fp, raw)
		b := append([]byte(nil), fr.Bytes...)
		copy(b[int(off)%len(b):], patch)
		got, blocked, _, fpstate, err := ParseAMD64Frame(b[:AMD64FrameSize], ctx)
		if err != nil {
			t.Fatalf("a full-length frame is always parseable: %v", err)
		}
		if blocked&UnblockableMask != 0 || got.CS&3 != 3 || got.SS&3 != 3 {
			t.Fatalf("bad restore: blocked %#x cs %#x ss %#x", blocked, got.CS, got.SS)
		}
		if fpstate >= fr.Addr && fpstate-fr.Addr < uint64(len(b)) {
			_ = RestoreAMD64FPState(&got, fpstate, b[fpstate-fr.Addr:])
		}
	})
}
