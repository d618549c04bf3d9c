package amd64

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// FuzzRunX86 runs arbitrary instruction streams through the interpreter
// (Run and Step, with and without the cache model and the re-decode mode)
// and checks that no guest can crash or hang the host: every event must
// come back as a vm.Exit. Registers point into mapped memory, at page ends,
// near the top of user space and near 2^64, so that wrapping and
// page-crossing accesses happen. Exits are handled as the kernel would with
// a signal handler that skips the faulting instruction.
//
// Run it with
//
//	go test -run '^$' -fuzz '^FuzzRunX86$' -fuzztime 8s ./internal/vm/amd64
func FuzzRunX86(f *testing.F) {
	for i, s := range fuzzSeedsX86 {
		b, err := hex.DecodeString(s)
		if err != nil {
			f.Fatalf("seed %d: %v", i, err)
		}
		for _, seed := range []uint64{0, 1, uint64(i) * 0x9e3779b97f4a7c15, ^uint64(0)} {
			f.Add(b, seed)
		}
	}
	// Windows of real code from the committed guest binaries.
	for _, name := range []string{"coremark", "printf", "fibfp", "strings"} {
		text := elfText(f, filepath.Join("..", "..", "..", "testdata", "bin", "amd64", name))
		for k := 1; k < 4 && len(text) >= 512; k++ {
			off := len(text) * k / 4
			if off+512 > len(text) {
				off = len(text) - 512
			}
			f.Add(append([]byte(nil), text[off:off+512]...), uint64(k)*0x51ed2701)
		}
	}
	f.Fuzz(func(t *testing.T, code []byte, seed uint64) {
		fuzzRunX86(t, code, seed)
	})
}

// elfText returns the .text section of a committed guest binary (nil when
// the file is missing, so the fuzzer still runs from the other seeds).
func elfText(tb testing.TB, path string) []byte {
	ef, err := elf.Open(path)
	if err != nil {
		tb.Logf("no seed binary: %v", err)
		return nil
	}
	defer ef.Close()
	s := ef.Section(".text")
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		return nil
	}
	return b
}

// Fuzz address-space layout.
const (
	fzCode   = 0x400000 // two code pages; the stream straddles their boundary
	fzData   = 0x600000 // 64 KiB rw, then a read-only page, then a hole
	fzDataSz = 0x10000
	fzRO     = fzData + fzDataSz
	fzStack  = 0x800000 // top of a 64 KiB stack
	fzTop    = vm.TaskSize - 2*vm.PageSize
	fzMaxLen = 2*vm.PageSize - 16

	fzBudget   = 1024
	fzMaxExits = 48
	fzMaxSteps = 512
)

// fuzzRNG is splitmix64: the register values are a function of the seed.
type fuzzRNG uint64

func (r *fuzzRNG) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// value returns an interesting register value.
func (r *fuzzRNG) value() uint64 {
	v := r.next()
	small := v >> 8 & 0xff
	switch v & 15 {
	case 0:
		return fzData + v>>16&(fzDataSz-1)
	case 1: // near the end of a data page
		return fzData + (v>>16&15)<<vm.PageShift + vm.PageSize - small&31
	case 2: // near the end of the data area (crossing into the read-only page)
		return fzRO - small&63
	case 3: // near the top of user space
		return vm.TaskSize - small
	case 4: // near 2^64
		return -small
	case 5:
		return fzStack - small
	case 6: // top mapped page, near its start (crossing down into the hole)
		return fzTop - 64 + small&127
	case 7:
		return small
	case 8: // counts and shifts
		return []uint64{0, 1, 2, 63, 64, 0xffffffff, 1 << 32, 1 << 63, 1<<63 - 1, ^uint64(0)}[small%10]
	case 9:
		return fzCode + vm.PageSize - small
	case 10: // near 2^32 (32-bit address wrap)
		return 1<<32 - small
	case 11:
		return fzRO + small
	}
	return r.next()
}

// fuzzMM builds the fuzz address space with code straddling the boundary
// of the two code pages. It returns the address of the stream.
// mode&1 makes the code writable, mode>>1&3 picks where the stream
// lies: straddling the boundary of the two code pages (with a branch back
// to its start after it), at the end of the second one (so that its last
// instruction runs into the unmapped page above), or straddling into a
// second page that is readable but not executable.
func fuzzMM(t *testing.T, code []byte, mode uint64) (*vm.MM, uint64) {
	mm := vm.NewMM()
	codeProt := vm.ProtRead | vm.ProtExec
	if mode&1 != 0 {
		codeProt |= vm.ProtWrite
	}
	place := mode >> 1 & 3
	prot2 := codeProt
	if place == 2 {
		prot2 = vm.ProtRead
	}
	for _, v := range []vm.VMA{
		{Start: fzCode, End: fzCode + vm.PageSize, Prot: codeProt},
		{Start: fzCode + vm.PageSize, End: fzCode + 2*vm.PageSize, Prot: prot2},
		{Start: fzData, End: fzData + fzDataSz, Prot: vm.ProtRead | vm.ProtWrite},
		{Start: fzRO, End: fzRO + vm.PageSize, Prot: vm.ProtRead},
		{Start: fzStack - 0x10000, End: fzStack, Prot: vm.ProtRead | vm.ProtWrite},
		{Start: fzTop, End: vm.TaskSize, Prot: vm.ProtRead | vm.ProtWrite},
	} {
		if err := mm.Map(v); err != nil {
			t.Fatal(err)
		}
	}
	n := len(code)
	start := uint64(fzCode + vm.PageSize - n/2)
	if place == 1 {
		start = fzCode + 2*vm.PageSize - uint64(n)
	}
	// INT3 everywhere, the stream, then a jump back to its start.
	page := make([]byte, 2*vm.PageSize)
	for i := range page {
		page[i] = 0xCC
	}
	off := int(start - fzCode)
	copy(page[off:], code)
	if off+n+5 <= len(page) {
		page[off+n] = 0xE9
		binary.LittleEndian.PutUint32(page[off+n+1:], uint32(-(n + 5)))
	}
	if err := mm.Poke(page, fzCode); err != nil {
		t.Fatal(err)
	}
	return mm, start
}

// insnLen is the length of the instruction at pc (1 when it cannot be
// decoded), for a handler that skips it.
func insnLen(mm *vm.MM, pc uint64) uint64 {
	var b [15]byte
	n := 0
	for ; n < len(b); n++ {
		if mm.Peek(b[n:n+1], pc+uint64(n)) != nil {
			break
		}
	}
	in, err := decode.DecodeX86(b[:n], pc)
	if (err == nil || err == decode.ErrUndefined) && in.Len > 0 {
		return uint64(in.Len)
	}
	return 1
}

func fuzzRunX86(t *testing.T, code []byte, seed uint64) {
	if len(code) > fzMaxLen {
		code = code[:fzMaxLen]
	}
	// A hang is a crash: panic (which the fuzzer records) rather than spin.
	watchdog := time.AfterFunc(60*time.Second, func() {
		panic(fmt.Sprintf("FuzzRunX86: hang with code %x seed %#x", code, seed))
	})
	defer watchdog.Stop()

	rng := fuzzRNG(seed)
	mode := rng.next()
	mm, start := fuzzMM(t, code, mode>>16)
	c := NewCPU(mm)
	c.SetPC(start)
	rs := c.Regs()
	for i := range rs.GPR {
		rs.GPR[i] = rng.value()
	}
	if mode&2 != 0 {
		rs.GPR[4] = fzStack - 256
	}
	for i := range rs.XMM {
		rs.XMM[i] = [2]uint64{rng.value(), rng.next()}
	}
	for i := range rs.ST {
		rs.ST[i] = F80{Mant: rng.value(), SignExp: uint16(rng.next())}
	}
	rs.FSBase = rng.value()
	rs.GSBase = rng.value()
	if mode>>13&1 != 0 {
		// Random x87 stack top, tags, control word and MXCSR (exception
		// masks, rounding, DAZ/FTZ).
		rs.FSW = uint16(rng.next()) & 0x3800
		rs.FTW = uint8(rng.next())
		rs.FCW = 0x37f ^ uint16(rng.next())&0x0f3f
		rs.MXCSR = 0x1f80 ^ uint32(rng.next())&0xffff
	}
	c.SetRegs(rs)
	// Status flags, DF and AC.
	c.SetRFLAGS(rfIF | rng.next()&(statusMask|rfDF|rfAC))
	switch mode >> 2 & 7 {
	case 1:
		c.SetRedecode(true)
	case 2:
		c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
	case 3:
		c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
		c.SetRedecode(true)
	}
	stepMode := mode>>5&3 == 0

	budget := int64(fzBudget)
	if mode>>20&3 == 0 { // tiny budgets end runs at odd places
		budget = 1 + int64(mode>>22&7)
	}

	var cpu vm.CPU = c
	exits := 0
	for exits < fzMaxExits {
		before := cpu.Retired()
		var e vm.Exit
		if stepMode {
			var snap Regs
			if cur, ok := cpu.(*CPU); ok {
				snap = *cur.Regs()
			}
			e = cpu.Step()
			d := cpu.Retired() - before
			if d > 1 || (e.Reason == vm.ExitStep && d != 1) {
				t.Fatalf("Step retired %d instructions (exit %v at %#x)", d, e.Reason, e.PC)
			}
			switch e.Reason {
			case vm.ExitFault, vm.ExitUndefined, vm.ExitAlignment, vm.ExitDivide, vm.ExitPrivileged:
				// The register state at a synchronous exception is the
				// state before the instruction, apart from the progress
				// of an interrupted REP string instruction.
				got := *cpu.(*CPU).Regs()
				if got.GPR[1] != snap.GPR[1] || got.GPR[6] != snap.GPR[6] || got.GPR[7] != snap.GPR[7] {
					// Completed iterations of REP LODS also load RAX,
					// those of REPE/REPNE CMPS/SCAS set the status flags.
					got.GPR[0], got.GPR[1], got.GPR[6], got.GPR[7] = snap.GPR[0], snap.GPR[1], snap.GPR[6], snap.GPR[7]
					got.RFLAGS = got.RFLAGS&^statusMask | snap.RFLAGS&statusMask
				}
				if got.GPR != snap.GPR || got.RIP != snap.RIP || got.XMM != snap.XMM || got.RFLAGS != snap.RFLAGS {
					t.Fatalf("%v exit at %#x (%s) changed registers:\n%+v\n%+v", e.Reason, e.PC, cpu.Disasm(e.PC), snap, got)
				}
			}
			if e.Reason == vm.ExitStep {
				if cpu.Retired() >= fzMaxSteps {
					break
				}
				continue
			}
		} else {
			if mode>>7&7 == 0 && exits == 3 {
				cpu.Interrupt()
			}
			e = cpu.Run(budget)
			if d := cpu.Retired() - before; d > uint64(budget) {
				t.Fatalf("Run(%d) retired %d instructions", budget, d)
			}
		}
		if cpu.Retired() < before {
			t.Fatalf("Retired went back from %d to %d", before, cpu.Retired())
		}
		if e.PC != cpu.PC() {
			t.Fatalf("%v exit PC %#x but CPU PC %#x", e.Reason, e.PC, cpu.PC())
		}
		exits++
		switch e.Reason {
		case vm.ExitBudget:
		case vm.ExitSyscall:
			cpu.SetReg(0, ^uint64(37)) // -ENOSYS
		case vm.ExitFault, vm.ExitUndefined, vm.ExitAlignment, vm.ExitBreakpoint,
			vm.ExitPrivileged, vm.ExitDivide:
			if e.Reason == vm.ExitUndefined && int(e.RawLen) > len(e.Raw) {
				t.Fatalf("undefined exit with RawLen %d", e.RawLen)
			}
			_ = cpu.Disasm(e.PC) // what uvm prints for a fatal exit
			// A handler that skips the instruction, or goes back to the
			// stream when pc left the code pages.
			pc := e.PC + insnLen(mm, e.PC)
			if pc < fzCode || pc >= fzCode+2*vm.PageSize {
				pc = start
			}
			cpu.SetPC(pc)
		default:
			t.Fatalf("unexpected exit %v", e.Reason)
		}
		if mode>>10&7 == 0 && exits == 5 {
			// A thread created mid-run continues in the same address space.
			cpu = cpu.Clone(mm)
		}
		if cpu.Retired() > fzMaxExits*fzBudget {
			break
		}
	}
	_ = cpu.TraceLine()
}

// fuzzSeedsX86 are hand-picked instruction sequences (assembled with
// llvm-mc): REP string instructions (with DF, 0x67 and FS), 16-byte SSE
// loads and stores, x87 (loads/stores of every size, transcendental,
// FXSAVE/FRSTOR/FNSAVE), DIV/IDIV, system and privileged instructions,
// stack and locked read-modify-write forms (CMPXCHG16B, BT with a register
// bit offset), scalar SSE/BMI, addressing forms (RIP-relative, 0x67,
// FS/GS, moffs), LOOP/JRCXZ, self-modifying code and AVX.
var fuzzSeedsX86 = []string{
	"f3a4f348abfdf348a5fcf3a6f2aef3acf367aaf3a5f366a5f366abf348a7f348ad64f3a4",
	"f30f7f070f290e0f1154caff660fe71f660f6f2424660f380028660f3a63331a66410fd638f2450f1141f866450ff7ca" +
		"450f171af2450ff023450f2b2c2466450f3a15750007664d0f3a223e0164f30f6f00",
	"dd07db3edf2adb19d9fed9f2d9f1d9f80fae070fae0ed922d931dd23dd750041df2041df3141db2a41dd0bd9cddff341" +
		"d92c24dfe0d9f0d9fdd9f3d9fad9fcd9f4d9f5d9ffd9fbdcf241da7500dbe9dbd4d9f7ddc6d9eed9e8d9eb",
	"48f7f148f7faf63748f73ef6f1f7fb49f720496b018049f7ea",
	"0fa20f310f05cccd800f0bf4ece68048cffafbccf10f01f90faee80faef00faef8f390f30fc7f8480fc7f0480fc7f90f" +
		"01d00f02c10f01000f01f80f34",
	"505bff10c21000c8000103c9488737480fc70ff0480fc106f00fb14a01f00fc74903480fa307480fab0ef00fbb1a660f" +
		"b313ff7424088f0424ffd0ff269c9df048ff07f0f71ef0800a01d7ffe0",
	"f20f1007f2480f2cc1660f51d30f5f26660fd7c5660fc5ce03660fc4fa02f24c0f2ac3f2480f38f107f3480fb8caf348" +
		"0fbdc3f3480fbc0e480fbcd0480fbdd9480fa5d8480facf23f48d3d0d01f9f9e480f38f00666480f38f6c3f3480f38f6" +
		"cac4e2e3f5c1c4e2caf5d7c4e2e0f2c1c4e2f0f7c3c4e2f1f7c3c4e2f2f716c4e3fbf0c311c4e2e3f6c1c4e2f0f5c3c4" +
		"e2f8f3cb440f5a0f450f5bd366450f3a0be50466450f3a40f7ff660f3a600744660f3841ca660f3804dc660ff6ee6641" +
		"0f3a44f81166450f38dcca450f38cbdc0fae160fae1f660f3a21c14d660f70d31b660f67e5660f380bf766450f3810c1" +
		"66410f50c2f2450fe6dcf3450f5bee66440f2e3a0f2fc1",
	"488b050010000048895c24f8c684cfffffff7f01678b049865488b0c250000000064488b1648a10000ffffffffffff48" +
		"a3f8ffffffff7f0000488d5cc8ff0fb786ff0f0000480fbe0f486316480f44070f9506480fc1d84899984898480fc848" +
		"f7d848f7174819d84883160148d3f848d1c1c1ca1f",
	"e2fee300e0fa48ffc975f9ebf3",
	"4889f8c600c3ffd0c705ecffffff90909090ebec",
	"c5fe6f07c5fe7f0ec5e1fed4c5f877c4e27d78eec5f8113d10000000c44135efc2c44299b8ddc4620500f0c4e2712e17" +
		"c4e251921ca00fae270fae2ec5f96ec0c5e9740fc5f9d7c3c4e27917e5c5f892c8",
}
