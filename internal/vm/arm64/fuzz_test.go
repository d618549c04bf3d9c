package arm64

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/uvm-emu/uvm/internal/icache"
	"github.com/uvm-emu/uvm/internal/vm"
)

// FuzzRunA64 runs arbitrary instruction streams through the interpreter
// (Run and Step, with and without the cache model and the re-decode mode)
// and checks that no guest can crash or hang the host: every event must
// come back as a vm.Exit. Registers point into mapped memory, at page ends,
// near the top of user space and near 2^64, so that wrapping and
// page-crossing accesses happen. Exits are handled as the kernel would with
// a signal handler that skips the faulting instruction.
//
// Run it with
//
//	go test -run '^$' -fuzz '^FuzzRunA64$' -fuzztime 8s ./internal/vm/arm64
func FuzzRunA64(f *testing.F) {
	for i, s := range fuzzSeedsA64 {
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
		text := elfText(f, filepath.Join("..", "..", "..", "testdata", "bin", "arm64", name))
		for k := 1; k < 4 && len(text) >= 512; k++ {
			off := (len(text) * k / 4) &^ 3
			if off+512 > len(text) {
				off = len(text) - 512
			}
			f.Add(append([]byte(nil), text[off:off+512]...), uint64(k)*0x51ed2701)
		}
	}
	f.Fuzz(func(t *testing.T, code []byte, seed uint64) {
		fuzzRunA64(t, code, seed)
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
	fzMaxLen = 2*vm.PageSize - 8

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
		return fzCode + vm.PageSize - small&^3
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
	n := len(code) &^ 3
	start := uint64(fzCode + vm.PageSize - (n/2)&^3)
	if place == 1 {
		start = fzCode + 2*vm.PageSize - uint64(n)
	}
	// BRK #0x7ff everywhere, the stream, then a branch back to its start.
	page := make([]byte, 2*vm.PageSize)
	for i := 0; i < len(page); i += 4 {
		binary.LittleEndian.PutUint32(page[i:], brk0|0x7ff<<5)
	}
	off := int(start - fzCode)
	copy(page[off:], code[:n])
	if off+n < len(page) {
		back := uint32(-(n / 4))
		binary.LittleEndian.PutUint32(page[off+n:], 0x14000000|back&0x3ffffff)
	}
	if err := mm.Poke(page, fzCode); err != nil {
		t.Fatal(err)
	}
	return mm, start
}

func fuzzRunA64(t *testing.T, code []byte, seed uint64) {
	if len(code) > fzMaxLen {
		code = code[:fzMaxLen]
	}
	// A hang is a crash: panic (which the fuzzer records) rather than spin.
	watchdog := time.AfterFunc(60*time.Second, func() {
		panic(fmt.Sprintf("FuzzRunA64: hang with code %x seed %#x", code, seed))
	})
	defer watchdog.Stop()

	rng := fuzzRNG(seed)
	mode := rng.next()
	mm, start := fuzzMM(t, code, mode>>16)
	c := NewCPU(mm)
	c.SetPC(start)
	rs := c.Regs()
	for i := range rs.X {
		rs.X[i] = rng.value()
	}
	rs.SP = rng.value()
	if mode&2 != 0 {
		rs.SP = fzStack - 256
	}
	rs.NZCV = rng.next() & 0xf0000000
	for i := range rs.V {
		rs.V[i] = [2]uint64{rng.value(), rng.next()}
	}
	// AHP, DN, FZ, RMode and FZ16.
	rs.FPCR = uint32(rng.next()) & (1<<26 | 1<<25 | 1<<24 | 3<<22 | 1<<19)
	rs.TPIDR = rng.value()
	c.Counter = func(retired, _ uint64) uint64 { return retired * 3 }
	switch mode >> 2 & 7 {
	case 1:
		c.SetRedecode(true)
	case 2:
		c.SetCacheModel(icache.NewModel(icache.DefaultModelConfig()))
	case 3:
		cfg := icache.DefaultModelConfig()
		cfg.ICache = icache.ICacheCoherent
		c.SetCacheModel(icache.NewModel(cfg))
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
			case vm.ExitFault, vm.ExitUndefined, vm.ExitAlignment:
				// The register state at a synchronous exception is the
				// state before the instruction.
				if got := *cpu.(*CPU).Regs(); got.X != snap.X || got.SP != snap.SP || got.V != snap.V || got.NZCV != snap.NZCV {
					t.Fatalf("%v exit at %#x (%s) changed registers", e.Reason, e.PC, cpu.Disasm(e.PC))
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
			d := cpu.Retired() - before
			if d > uint64(budget)+vm.PageSize/4 {
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
			pc := e.PC&^3 + 4
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

// fuzzSeedsA64 are hand-picked instruction sequences (assembled with
// llvm-mc): SIMD structure loads and stores, LDP/STP with writeback,
// exclusives and LSE atomics, cache maintenance and system registers,
// branches and loops, FP conversions, integer division, loads of every
// addressing mode, SIMD integer/crypto, and self-modifying code.
var fuzzSeedsA64 = []string{
	// LSE atomics, crypto, RDM/DotProd, FRINT32/JSCVT, LRCPC2, FlagM, MRS of ID registers
	"4000e1f843fce1c846fc64084080e178401021382048284e0068284e2040005e008060ce000000ce4194834e4184436e41e8216e41007e1e410040d9e1430099258401ba1f4000d5000038d5000638d5",
	"0020004c20089f4c4004bfad6300803d8084004da41400acc684874c003d004d",
	"0020404c2008df4c4004ffad6378e93c80c8404da0ece64dc41440ace0b0404d01f1df3c",
	"400440a9a39080a9061dff6820851f29ea2fffa9fd7ba0a9ccb55fa9e0853f6d028ec02c",
	"207c5fc8237c02c8c4947fc8c49427c8827c2048410020f8a480e3f8077da6886a31e93880fd5f48a2fd0108c0fddfc8" +
		"e1fd9fc802fe6008216220f8",
	"20740bd521750bd5227b0bd59f3b03d5df3f03d540e03bd541d03bd542d01bd523003bd5e4003bd505443bd505441bd5" +
		"26443bd526441bd507423bd507421bd5010000d4200020d4000040d4237e0bd5247a0bd5a00080f95f3f03d53f2003d5" +
		"5f2003d5080038d509e03bd5",
	"00001fd620003fd640005fd6e0ffff54430000b4a4ffffb62500183766ffff35faffff97f9ffff1701081fd7ff0b5fd6" +
		"5f083fd6",
	"000400f1e1ffff54210400f1a2ffff54420002abe7ffff54",
	"2018621e83c0611e2000789e20d8a14e6210a44fc500629e20c0231ee624481f6a792c1ecd41671e0fda616e20007e1e" +
		"62ec191e0820601e2414221e83cc651ee6d8e17e2869210e6a79614e20d4e26e20c8306e00106f1e2000669e6200af9e" +
		"a400e49e2028e21e",
	"2008c29a830cc51ae64cc89a4951cb1aac11c0daee01c05a300ec0da7206c05ab45e169b387fda9b9b7f5d9b2014c0da" +
		"6220c49ac52cc71a28fdca938b0d44b3cd7d1f13efb95fba304692da200c229ba49ca69b",
	"e0ffff584100009c62d864b8c50c90b807f14f78491580388b0940f8cd090038e169b0f8515af378b4fe3ff9f6fe3f39" +
		"388f5ffc7ac71fbcbc6b3e7c2000003d62c0bff8a40420f8",
	"2060054ee610080e49790b6eac194e4e0fba314e513ab06e93567f4fd506204f179f080f595b204e9be3fd4e2048284e" +
		"6240045ec53c184e071d1c4e490d014e4be5056facc9ae4f0f46f16e722a212eb42a214ef60a204e381f7a6e9b37fd6e" +
		"202ce26e8324407fc544406f07557f7f492d1e4e8bb9f15ecd51af4e305ad24e2000025e838065cee62408ce",
	"00000010000000f901044091207b0bd59f3b03d520750bd59f3b03d5df3f03d500001fd6",
}
