package arm64

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// genLSECases makes n random LSE instructions (every op, size and
// ordering) for the differential harness of diff_test.go: register fields
// steered to x0..x6/xzr, the base x7 or sp, an aligned offset into the
// buffer, and for half of the compare-and-swaps a compare value loaded from
// memory so that the swap happens.
func genLSECases(rng *rand.Rand, n int) []diffCase {
	var cases []diffCase
	for len(cases) < n {
		var raw uint32
		var size uint // log2 bytes of the whole access
		var pre []string
		rn := pickBase(rng)
		rt := pickReg(rng)
		rs := pickReg(rng)
		acq, rel := uint32(rng.Intn(2)), uint32(rng.Intn(2))
		switch rng.Intn(5) {
		case 0, 1, 2: // LDADD … LDUMIN, SWP
			size = uint(rng.Intn(4))
			o3, opc := uint32(0), uint32(rng.Intn(8))
			if rng.Intn(9) == 0 {
				o3, opc = 1, 0
			}
			raw = uint32(size)<<30 | 0x38200000 | acq<<23 | rel<<22 | rs<<16 | o3<<15 | opc<<12 | rn<<5 | rt
		case 3: // CAS
			size = uint(rng.Intn(4))
			raw = uint32(size)<<30 | 0x08a07c00 | acq<<22 | rs<<16 | rel<<15 | rn<<5 | rt
			if rs != 31 && rng.Intn(2) == 0 {
				pre = append(pre, fmt.Sprintf("ldr%s %s%d, [x7]", [4]string{"b", "h", "", ""}[size], "wwwx"[size:size+1], rs))
			}
		case 4: // CASP
			sz := uint32(rng.Intn(2))
			size = uint(sz) + 3
			rs, rt = uint32(2*rng.Intn(3)), uint32(2*rng.Intn(3))
			if rng.Intn(6) == 0 {
				rt = 30 // x30:xzr
			}
			raw = sz<<30 | 0x08207c00 | acq<<22 | rs<<16 | rel<<15 | rn<<5 | rt
			if rng.Intn(2) == 0 {
				r := "wx"[sz : sz+1]
				pre = append(pre, fmt.Sprintf("ldp %s%d, %s%d, [x7]", r, rs, r, rs+1))
			}
		}
		in := decode.DecodeA64(raw)
		if in.Op != decode.A64LDOP && in.Op != decode.A64CAS && in.Op != decode.A64CASP {
			panic(fmt.Sprintf("%#08x decodes as %v", raw, in.Op))
		}
		if rt == 30 { // x30 is the case's return address
			pre = append([]string{"mov x10, x30", "mov x30, x0"}, pre...)
		}
		if off := rng.Intn(64) &^ (1<<size - 1); off != 0 {
			pre = append([]string{fmt.Sprintf("add x7, x7, #%d", off), "mov sp, x7"}, pre...)
		}
		text := strings.Join(append(pre, fmt.Sprintf(".inst 0x%08x", raw)), "\n")
		if rt == 30 {
			text += "\nmov x1, x30\nmov x30, x10"
		}
		cases = append(cases, diffCase{text: text, mem: true,
			desc: fmt.Sprintf("%#08x %s (%s)", raw, decode.DisasmA64(raw, 0), strings.Join(pre, "; "))})
	}
	return cases
}

// TestLSEDiffQemu compares random LSE atomics with qemu-aarch64 -cpu max.
func TestLSEDiffQemu(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 150
	}
	seed := int64(81)
	if v := os.Getenv("UVM_LSE_CASES"); v != "" {
		fmt.Sscanf(strings.Replace(v, ",", " ", 1), "%d %d", &n, &seed)
	}
	rng := rand.New(rand.NewSource(seed))
	runDiffCases(t, genLSECases(rng, n), rng, "-march=armv8.1-a")
}

// lseWord encodes a few LSE instructions for the unit tests below.
const (
	ldaddalX1X0X2 = 0xf8e10040 // ldaddal x1, x0, [x2]
	casalX1X3X2   = 0xc8e1fc43 // casal x1, x3, [x2]
	swpW1W0X2     = 0xb8218040 // swp w1, w0, [x2]
)

// TestLSEFaults: an LSE atomic on a read-only or unmapped page is a write
// fault, a misaligned one an alignment fault, and neither changes a register.
func TestLSEFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		insn   uint32
		addr   uint64
		reason vm.ExitReason
	}{
		{"ldaddal read-only", ldaddalX1X0X2, tCode + 0x100, vm.ExitFault},
		{"casal unmapped", casalX1X3X2, 0x10000000, vm.ExitFault},
		{"swp misaligned", swpW1W0X2, tData + 2, vm.ExitAlignment},
		{"casal misaligned", casalX1X3X2, tData + 4, vm.ExitAlignment},
		{"ldapur misaligned", 0xd9400041, tData + 4, vm.ExitAlignment}, // ldapur x1, [x2]
	} {
		c := newTestCPU(t, []uint32{tc.insn, brk0})
		c.SetReg(0, 11)
		c.SetReg(1, 22)
		c.SetReg(2, tc.addr)
		c.SetReg(3, 33)
		e := c.Run(100)
		if e.Reason != tc.reason || e.PC != tCode || e.Fault.Addr != tc.addr {
			t.Errorf("%s: exit %v pc %#x fault %+v", tc.name, e.Reason, e.PC, e.Fault)
		}
		if tc.reason == vm.ExitFault && e.Fault.Access != vm.AccessWrite {
			t.Errorf("%s: fault access %v, want write", tc.name, e.Fault.Access)
		}
		if c.Reg(0) != 11 || c.Reg(1) != 22 || c.Reg(3) != 33 {
			t.Errorf("%s: registers changed: %d %d %d", tc.name, c.Reg(0), c.Reg(1), c.Reg(3))
		}
	}
}

// TestLSEParallel: LSE atomics of several CPUs on one address space are
// atomic (run with -race to check the host side too).
func TestLSEParallel(t *testing.T) {
	const iters = 20000
	// Every access to the shared words is atomic (a plain load racing with
	// the CAS would be a guest data race, which -race reports by design).
	prog := []uint32{
		0xf8e10040, // 0: ldaddal x1, x0, [x2]
		0x78210065, // 4: ldaddh w1, w5, [x3]
		0x91004068, // 8: add x8, x3, #16
		0xf83f0106, // c: ldadd xzr, x6, [x8]   (atomic read of [x3+16])
		0x910004c7, // 10: add x7, x6, #1
		0xaa0603e9, // 14: mov x9, x6
		0xc8e9fd07, // 18: casal x9, x7, [x8]
		0xeb06013f, // 1c: cmp x9, x6
		0x54ffff61, // 20: b.ne c
		0xf1000484, // 24: subs x4, x4, #1
		0x54fffec1, // 28: b.ne 0
		brk0,
	}
	mm := vm.NewMM()
	for _, v := range []vm.VMA{
		{Start: tCode, End: tCode + tSize, Prot: vm.ProtRead | vm.ProtExec},
		{Start: tData, End: tData + tSize, Prot: vm.ProtRead | vm.ProtWrite},
	} {
		if err := mm.Map(v); err != nil {
			t.Fatal(err)
		}
	}
	pokeCode(t, mm, tCode, prog)
	const cpus = 4
	done := make(chan vm.Exit)
	for i := 0; i < cpus; i++ {
		c := NewCPU(mm)
		c.SetPC(tCode)
		c.SetReg(1, 1)
		c.SetReg(2, tData)
		c.SetReg(3, tData+0x100)
		c.SetReg(4, iters)
		go func() {
			// Run may return early: another CPU's first fetch of the
			// code page interrupts the others (TLB.SyncCode's
			// shootdown), and the task loop just runs again.
			for {
				if e := c.Run(1 << 40); e.Reason != vm.ExitBudget {
					done <- e
					return
				}
			}
		}()
	}
	for i := 0; i < cpus; i++ {
		if e := <-done; e.Reason != vm.ExitBreakpoint {
			t.Fatalf("exit %+v", e)
		}
	}
	var b [8]byte
	check := func(addr uint64, n int, want uint64) {
		if err := mm.Peek(b[:n], addr); err != nil {
			t.Fatal(err)
		}
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		if v != want {
			t.Errorf("[%#x] = %d, want %d", addr, v, want)
		}
	}
	check(tData, 8, cpus*iters)
	check(tData+0x100, 2, cpus*iters&0xffff)
	check(tData+0x110, 8, cpus*iters)
}

// lseEveryForm is one instruction of every LSE op, size class and pair
// form, with base x2 (16-byte aligned data).
var lseEveryForm = []uint32{
	0xf8e10040, // ldaddal x1, x0, [x2]
	0x38211040, // ldclrb w1, w0, [x2]
	0x78212040, // ldeorh w1, w0, [x2]
	0xb8213040, // ldset w1, w0, [x2]
	0xf8a14040, // ldsmaxa x1, x0, [x2]
	0xb8615040, // ldsminl w1, w0, [x2]
	0xf8e16040, // ldumaxal x1, x0, [x2]
	0x38217040, // lduminb w1, w0, [x2]
	0x78e18040, // swpalh w1, w0, [x2]
	0xf8218040, // swp x1, x0, [x2]
	0x08e17c40, // casab w1, w0, [x2]
	0x48a17c40, // cash w1, w0, [x2]
	0x88a1fc40, // casl w1, w0, [x2]
	0xc8a17c40, // cas x1, x0, [x2]
	0x48247c46, // casp x4, x5, x6, x7, [x2]
	0x0864fc46, // caspal w4, w5, w6, w7, [x2]
	// and the other new integer ops (flagm.go)
	0xd9400041, // ldapur x1, [x2]
	0x19c03041, // ldapursb w1, [x2, #3]
	0x99008041, // stlur w1, [x2, #8]
	0xd500401f, // cfinv
	0xd500403f, // xaflag
	0xba018425, // rmif x1, #3, #5
	0x3a00484d, // setf16 w2
}

// TestLSENoAllocs: LSE atomics (and LRCPC2, FlagM) allocate nothing.
func TestLSENoAllocs(t *testing.T) {
	c := newTestCPU(t, append(append([]uint32(nil), lseEveryForm...), brk0))
	run := func() {
		c.SetPC(tCode)
		c.SetReg(1, 0x1234)
		c.SetReg(2, tData)
		if e := c.Run(1 << 20); e.Reason != vm.ExitBreakpoint {
			t.Fatalf("%+v", e)
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}
