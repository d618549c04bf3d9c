package amd64

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/decode"
)

// Differential test of DPPS's addition order against the host CPU. The
// generic SSE/AVX differential tests draw few states with several NaN
// products, the only inputs where the order of DPPS's additions shows
// (in which NaN payload each lane gets). This one runs DPPS and
// VEX.256 VDPPS natively on NaN-heavy random inputs with random
// immediates and MXCSR settings and compares uvm's (*Regs).sseFPOp lane
// by lane, results and MXCSR. On non-Intel hosts the NaN payload choice
// is accepted (acceptDppsNaNPayloads).

// dppsHarness reads "mode imm mxcsr a0..a7 b0..b7" (hex) lines, runs
// DPPS xmm0, xmm1, imm (mode 0) or VDPPS ymm0, ymm0, ymm1, imm (mode 1)
// from MXCSR mxcsr and prints the eight result lanes and the MXCSR.
const dppsHarness = `
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
static const uint8_t sse[] = {
	0x0f,0xae,0x12,                /* ldmxcsr [rdx] */
	0x0f,0x10,0x07,                /* movups xmm0, [rdi] */
	0x0f,0x10,0x0e,                /* movups xmm1, [rsi] */
	0x66,0x0f,0x3a,0x40,0xc1,0x00, /* dpps xmm0, xmm1, imm */
	0x0f,0x11,0x07,                /* movups [rdi], xmm0 */
	0x0f,0xae,0x1a,                /* stmxcsr [rdx] */
	0xc3};
static const uint8_t avx[] = {
	0x0f,0xae,0x12,                /* ldmxcsr [rdx] */
	0xc5,0xfc,0x10,0x07,           /* vmovups ymm0, [rdi] */
	0xc5,0xfc,0x10,0x0e,           /* vmovups ymm1, [rsi] */
	0xc4,0xe3,0x7d,0x40,0xc1,0x00, /* vdpps ymm0, ymm0, ymm1, imm */
	0xc5,0xfc,0x11,0x07,           /* vmovups [rdi], ymm0 */
	0x0f,0xae,0x1a,                /* stmxcsr [rdx] */
	0xc5,0xf8,0x77,                /* vzeroupper */
	0xc3};
int main(void) {
	uint8_t *code = mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	unsigned mode, imm, mx;
	uint32_t a[8], b[8], m, host;
	if (code == MAP_FAILED) { perror("mmap"); return 1; }
	__asm__ volatile("stmxcsr %0" : "=m"(host));
	while (scanf("%u %x %x", &mode, &imm, &mx) == 3) {
		for (int i = 0; i < 8; i++) if (scanf("%x", &a[i]) != 1) return 1;
		for (int i = 0; i < 8; i++) if (scanf("%x", &b[i]) != 1) return 1;
		if (mode == 0) { memcpy(code, sse, sizeof sse); code[14] = imm; }
		else { memcpy(code, avx, sizeof avx); code[16] = imm; }
		m = mx;
		((void (*)(uint32_t *, uint32_t *, uint32_t *))code)(a, b, &m);
		__asm__ volatile("ldmxcsr %0" : : "m"(host));
		for (int i = 0; i < 8; i++) printf("%08x ", a[i]);
		printf("%08x\n", m);
	}
	return 0;
}
`

// dppsValue draws a float32 for a DPPS operand: mostly NaNs (quiet and
// signalling, either sign), with infinities, zeros, denormals and random
// bit patterns.
func dppsValue(r *rand.Rand) uint32 {
	switch r.Intn(10) {
	case 0, 1, 2:
		return 0x7fc00000 | r.Uint32()&0x803fffff
	case 3:
		return 0x7f800001 + r.Uint32()%0x3fffff | r.Uint32()&0x80000000
	case 4:
		return 0x7f800000 | r.Uint32()&0x80000000
	case 5:
		return r.Uint32() & 0x80000000
	case 6:
		return r.Uint32() & 0x807fffff
	default:
		return r.Uint32()
	}
}

func TestDppsNativeDifferential(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a linux/amd64 host")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "h.c")
	bin := filepath.Join(dir, "h")
	if err := os.WriteFile(src, []byte(dppsHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("cannot build the native harness: %v\n%s", err, out)
	}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	modes := 1
	if hostHasAVX2() {
		modes = 2
	}
	type dppsCase struct {
		mode, imm, mxcsr uint32
		a, b             [8]uint32
	}
	// Default MXCSR, FTZ+DAZ, the three other rounding modes, and with
	// sticky exception flags already set; all exceptions masked.
	mxcsrs := []uint32{0x1f80, 0x9fc0, 0x3f80, 0x5f80, 0x7f80, 0x1fbf}
	rng := rand.New(rand.NewSource(40))
	var in bytes.Buffer
	cases := make([]dppsCase, n)
	for k := range cases {
		c := &cases[k]
		c.mode, c.imm, c.mxcsr = uint32(rng.Intn(modes)), uint32(rng.Intn(256)), mxcsrs[rng.Intn(len(mxcsrs))]
		if rng.Intn(3) == 0 {
			c.imm |= 0xf0 // all four products
		}
		lanes := 4 + 4*int(c.mode)
		for i := range lanes {
			c.a[i], c.b[i] = dppsValue(rng), dppsValue(rng)
		}
		fmt.Fprintf(&in, "%d %x %x", c.mode, c.imm, c.mxcsr)
		for _, v := range append(c.a[:], c.b[:]...) {
			fmt.Fprintf(&in, " %x", v)
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("native harness: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	k, fails := 0, 0
	for ; sc.Scan() && k < n; k++ {
		c := cases[k]
		f := strings.Fields(sc.Text())
		if len(f) != 9 {
			t.Fatalf("bad harness line %d: %q", k, sc.Text())
		}
		var want, got [32]byte
		for i := range 8 {
			v, _ := strconv.ParseUint(f[i], 16, 32)
			binary.LittleEndian.PutUint32(want[4*i:], uint32(v))
		}
		wantMXCSR, _ := strconv.ParseUint(f[8], 16, 32)
		r := &Regs{MXCSR: c.mxcsr}
		for h := range int(c.mode) + 1 {
			var a, s vec
			for i := range 4 {
				setLane(&a, 4, i, uint64(c.a[4*h+i]))
				setLane(&s, 4, i, uint64(c.b[4*h+i]))
			}
			d, ok := r.sseFPOp(decode.SSEDpps, a, s, int64(c.imm))
			if !ok {
				t.Fatal("sseFPOp does not compute DPPS")
			}
			binary.LittleEndian.PutUint64(got[16*h:], d[0])
			binary.LittleEndian.PutUint64(got[16*h+8:], d[1])
		}
		asm := "dpps "
		if c.mode == 1 {
			asm = "vdpps "
		}
		acceptDppsNaNPayloads(asm, got[:], want[:])
		if got != want || r.MXCSR != uint32(wantMXCSR) {
			fails++
			if fails <= 5 {
				t.Errorf("%sxmm/ymm, imm %#x, mxcsr %#x: a=%x b=%x: got %x mxcsr %#x, want %x mxcsr %#x",
					asm, c.imm, c.mxcsr, c.a, c.b, got, r.MXCSR, want, wantMXCSR)
			}
		}
	}
	if k != n {
		t.Fatalf("harness returned %d of %d results", k, n)
	}
	if fails > 0 {
		t.Errorf("%d of %d DPPS cases differ", fails, n)
	}
	t.Logf("%d DPPS/VDPPS cases compared (host %s)", n, hostCPUVendor())
}
