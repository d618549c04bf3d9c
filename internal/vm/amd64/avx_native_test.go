package amd64

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/uvm-emu/uvm/internal/vm"
)

// Differential test of the AVX/AVX2/FMA/F16C half against the host CPU,
// built like TestSSENativeDifferential: a C harness runs each template
// natively from a given state (YMM0-15, GPRs, RFLAGS, MXCSR, a 512-byte
// memory window at RDI with RSI = RDI+128) and prints the state after it;
// uvm (x86-64-v3 model) runs the same bytes from the same state and must
// agree on every register, the flags, MXCSR and the window. It skips
// without a linux/amd64 host with gcc, AVX2, FMA and F16C.

type avxTemplate struct {
	kind int // skInt, skF64, skF32, skCnt
	asm  string
	// ignore lists memory-window byte ranges [from, to) not compared.
	ignore [][2]int
}

var avxMXCSRMask = [][2]int{{64 + 28, 64 + 32}}

var avxTemplates = []avxTemplate{
	// moves and VEX.128 upper-half zeroing
	{kind: skInt, asm: "vmovdqa ymm0, [rsi]"}, {kind: skInt, asm: "vmovdqu ymm0, [rsi+3]"}, {kind: skInt, asm: "vmovdqu [rdi+5], ymm1"},
	{kind: skInt, asm: "vmovaps ymm3, ymm4"}, {kind: skInt, asm: "vmovapd xmm8, xmm15"}, {kind: skInt, asm: "vmovups xmm0, [rsi+1]"},
	{kind: skInt, asm: "vmovdqa [rdi+32], ymm2"}, {kind: skInt, asm: "vmovntdq [rdi+64], ymm3"}, {kind: skInt, asm: "vlddqu ymm1, [rsi+7]"},
	{kind: skInt, asm: "vmovntdqa ymm1, [rsi]"}, {kind: skInt, asm: "vmovss xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vmovss xmm0, [rsi]"},
	{kind: skInt, asm: "vmovss [rdi], xmm1"}, {kind: skInt, asm: "vmovsd xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vmovsd xmm5, [rsi]"},
	{kind: skInt, asm: "vmovd xmm0, eax"}, {kind: skInt, asm: "vmovq xmm0, rax"}, {kind: skInt, asm: "vmovd eax, xmm1"}, {kind: skInt, asm: "vmovq rax, xmm1"},
	{kind: skInt, asm: "vmovq xmm0, xmm1"}, {kind: skInt, asm: "vmovq xmm0, [rsi]"}, {kind: skInt, asm: "vmovq [rdi], xmm1"}, {kind: skInt, asm: "vmovd [rdi], xmm1"},
	{kind: skInt, asm: "vmovlps xmm0, xmm1, [rsi]"}, {kind: skInt, asm: "vmovhpd xmm0, xmm1, [rsi]"}, {kind: skInt, asm: "vmovlpd [rdi], xmm2"},
	{kind: skInt, asm: "vmovhps [rdi], xmm2"}, {kind: skInt, asm: "vmovhlps xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vmovlhps xmm0, xmm1, xmm2"},
	{kind: skInt, asm: "vmovddup ymm0, ymm1"}, {kind: skInt, asm: "vmovddup xmm0, [rsi]"}, {kind: skInt, asm: "vmovshdup ymm0, ymm1"}, {kind: skInt, asm: "vmovsldup ymm0, [rsi]"},
	{kind: skInt, asm: "vpmovmskb eax, ymm1"}, {kind: skInt, asm: "vmovmskps eax, ymm1"}, {kind: skInt, asm: "vmovmskpd eax, ymm1"}, {kind: skInt, asm: "vpmovmskb eax, xmm1"},
	{kind: skInt, asm: "vpextrb eax, xmm1, 9"}, {kind: skInt, asm: "vpextrw eax, xmm1, 5"}, {kind: skInt, asm: "vpextrd [rdi], xmm1, 2"}, {kind: skInt, asm: "vpextrq rax, xmm1, 1"},
	{kind: skInt, asm: "vextractps eax, xmm1, 3"}, {kind: skInt, asm: "vpinsrb xmm0, xmm1, eax, 12"}, {kind: skInt, asm: "vpinsrw xmm0, xmm1, [rsi], 3"},
	{kind: skInt, asm: "vpinsrd xmm0, xmm1, eax, 1"}, {kind: skInt, asm: "vpinsrq xmm0, xmm1, rax, 1"}, {kind: skInt, asm: "vinsertps xmm0, xmm1, xmm2, 0x9c"},
	{kind: skInt, asm: "vinsertps xmm0, xmm1, [rsi], 0x21"},
	{kind: skInt, asm: "vbroadcastss ymm0, [rsi]"}, {kind: skInt, asm: "vbroadcastss xmm0, xmm1"}, {kind: skInt, asm: "vbroadcastsd ymm0, xmm1"},
	{kind: skInt, asm: "vbroadcastf128 ymm0, [rsi]"}, {kind: skInt, asm: "vbroadcasti128 ymm0, [rsi]"}, {kind: skInt, asm: "vpbroadcastb ymm0, xmm1"},
	{kind: skInt, asm: "vpbroadcastw xmm0, [rsi]"}, {kind: skInt, asm: "vpbroadcastd ymm0, xmm1"}, {kind: skInt, asm: "vpbroadcastq ymm0, [rsi]"},
	{kind: skInt, asm: "vinsertf128 ymm0, ymm1, xmm2, 1"}, {kind: skInt, asm: "vinserti128 ymm0, ymm1, [rsi], 0"}, {kind: skInt, asm: "vextractf128 xmm0, ymm1, 1"},
	{kind: skInt, asm: "vextracti128 [rdi], ymm1, 1"}, {kind: skInt, asm: "vperm2f128 ymm0, ymm1, ymm2, 0x31"}, {kind: skInt, asm: "vperm2i128 ymm0, ymm1, [rsi], 0x82"},
	{kind: skInt, asm: "vperm2i128 ymm0, ymm1, ymm2, 0x03"}, {kind: skInt, asm: "vpermq ymm0, ymm1, 0x1b"}, {kind: skInt, asm: "vpermpd ymm0, [rsi], 0x4e"},
	{kind: skInt, asm: "vpermd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpermps ymm0, ymm1, [rsi]"},
	{kind: skInt, asm: "vpermilps ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpermilpd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpermilps ymm0, ymm1, 0x93"},
	{kind: skInt, asm: "vpermilpd ymm0, [rsi], 0x5"}, {kind: skInt, asm: "vpermilpd xmm0, xmm1, 0x1"},
	{kind: skInt, asm: "vmaskmovps ymm0, ymm1, [rsi]"}, {kind: skInt, asm: "vmaskmovpd [rdi], ymm1, ymm2"}, {kind: skInt, asm: "vpmaskmovd xmm0, xmm1, [rsi]"},
	{kind: skInt, asm: "vpmaskmovq [rdi], ymm1, ymm2"}, {kind: skInt, asm: "vpmaskmovd [rdi], ymm1, ymm2"},
	{kind: skInt, asm: "vzeroupper"}, {kind: skInt, asm: "vzeroall"}, {kind: skInt, asm: "vstmxcsr [rdi]"},
	// integer (VEX.128 and VEX.256)
	{kind: skInt, asm: "vpaddb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpaddw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpaddd ymm0, ymm1, [rsi]"}, {kind: skInt, asm: "vpaddq xmm0, xmm1, xmm2"},
	{kind: skInt, asm: "vpsubb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsubw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsubd xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vpsubq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpaddsb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpaddusw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsubsw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsubusb ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpmullw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmulhw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmulhuw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmuludq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpmulld ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmuldq ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaddwd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaddubsw ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpmulhrsw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpavgb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpavgw xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vpsadbw ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpcmpeqb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpeqw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpeqd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpeqq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpcmpgtb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpgtw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpgtd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpcmpgtq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpand ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpandn ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpor ymm0, ymm1, [rsi]"}, {kind: skInt, asm: "vpxor xmm0, xmm1, xmm2"},
	{kind: skInt, asm: "vandps ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vandnpd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vorps xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vxorpd ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpminsb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpminsw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpminsd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpminub ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpminuw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpminud ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaxsb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaxsw ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpmaxsd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaxub ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaxuw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpmaxud ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpabsb ymm0, ymm1"}, {kind: skInt, asm: "vpabsw ymm0, [rsi]"}, {kind: skInt, asm: "vpabsd xmm0, xmm1"},
	{kind: skInt, asm: "vpsignb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsignw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpsignd ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vphaddw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vphaddd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vphaddsw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vphsubw ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vphsubd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vphsubsw xmm0, xmm1, xmm2"}, {kind: skInt, asm: "vphminposuw xmm0, xmm1"},
	{kind: skInt, asm: "vpunpcklbw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpcklwd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpckldq ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpcklqdq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpunpckhbw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpckhwd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpckhdq ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpunpckhqdq ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vunpcklps ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vunpckhps ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vunpcklpd ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vunpckhpd xmm0, xmm1, xmm2"},
	{kind: skInt, asm: "vpacksswb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpackssdw ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpackuswb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpackusdw ymm0, ymm1, ymm2"},
	{kind: skInt, asm: "vpshufb ymm0, ymm1, ymm2"}, {kind: skInt, asm: "vpshufb xmm0, xmm1, [rsi]"}, {kind: skInt, asm: "vpshufd ymm0, ymm1, 0x1b"}, {kind: skInt, asm: "vpshufhw ymm0, ymm1, 0xc6"},
	{kind: skInt, asm: "vpshuflw ymm0, [rsi], 0x39"}, {kind: skInt, asm: "vshufps ymm0, ymm1, ymm2, 0x8d"}, {kind: skInt, asm: "vshufpd ymm0, ymm1, ymm2, 0x6"}, {kind: skInt, asm: "vshufpd xmm0, xmm1, xmm2, 0x1"},
	{kind: skInt, asm: "vpalignr ymm0, ymm1, ymm2, 5"}, {kind: skInt, asm: "vpalignr ymm0, ymm1, ymm2, 20"}, {kind: skInt, asm: "vpalignr xmm0, xmm1, [rsi], 16"},
	{kind: skInt, asm: "vblendps ymm0, ymm1, ymm2, 0xa5"}, {kind: skInt, asm: "vblendpd ymm0, ymm1, ymm2, 0x6"}, {kind: skInt, asm: "vpblendw ymm0, ymm1, ymm2, 0x3c"},
	{kind: skInt, asm: "vpblendd ymm0, ymm1, ymm2, 0x96"}, {kind: skInt, asm: "vpblendd xmm0, xmm1, xmm2, 0x5"},
	{kind: skInt, asm: "vblendvps ymm0, ymm1, ymm2, ymm3"}, {kind: skInt, asm: "vblendvpd ymm0, ymm1, [rsi], ymm3"}, {kind: skInt, asm: "vpblendvb ymm0, ymm1, ymm2, ymm3"},
	{kind: skInt, asm: "vpblendvb xmm0, xmm1, xmm2, xmm9"},
	{kind: skInt, asm: "vmpsadbw ymm0, ymm1, ymm2, 0x2d"}, {kind: skInt, asm: "vmpsadbw xmm0, xmm1, xmm2, 0x5"},
	{kind: skInt, asm: "vptest ymm0, ymm1"}, {kind: skInt, asm: "vptest xmm2, xmm2"}, {kind: skInt, asm: "vtestps ymm0, ymm1"}, {kind: skInt, asm: "vtestpd xmm0, [rsi]"},
	{kind: skInt, asm: "vpmovsxbw ymm0, xmm1"}, {kind: skInt, asm: "vpmovsxbd ymm0, xmm1"}, {kind: skInt, asm: "vpmovsxbq ymm0, [rsi]"}, {kind: skInt, asm: "vpmovsxwd ymm0, xmm1"},
	{kind: skInt, asm: "vpmovsxwq ymm0, xmm1"}, {kind: skInt, asm: "vpmovsxdq ymm0, [rsi]"}, {kind: skInt, asm: "vpmovzxbw ymm0, [rsi]"}, {kind: skInt, asm: "vpmovzxbd ymm0, xmm1"},
	{kind: skInt, asm: "vpmovzxbq xmm0, xmm1"}, {kind: skInt, asm: "vpmovzxwd ymm0, xmm1"}, {kind: skInt, asm: "vpmovzxwq ymm0, [rsi]"}, {kind: skInt, asm: "vpmovzxdq ymm0, xmm1"},
	// shifts
	{kind: skInt, asm: "vpsllw ymm0, ymm1, 3"}, {kind: skInt, asm: "vpslld ymm0, ymm1, 17"}, {kind: skInt, asm: "vpsllq ymm0, ymm1, 40"}, {kind: skInt, asm: "vpsrlw ymm0, ymm1, 15"},
	{kind: skInt, asm: "vpsrld ymm0, ymm1, 1"}, {kind: skInt, asm: "vpsrlq xmm0, xmm1, 63"}, {kind: skInt, asm: "vpsraw ymm0, ymm1, 5"}, {kind: skInt, asm: "vpsrad ymm0, ymm1, 40"},
	{kind: skInt, asm: "vpslldq ymm0, ymm1, 3"}, {kind: skInt, asm: "vpsrldq ymm0, ymm1, 7"}, {kind: skInt, asm: "vpsrldq xmm0, xmm1, 15"},
	{kind: skCnt, asm: "vpsllw ymm0, ymm2, xmm1"}, {kind: skCnt, asm: "vpsrlq ymm0, ymm2, xmm1"}, {kind: skCnt, asm: "vpsrad ymm0, ymm2, xmm1"}, {kind: skCnt, asm: "vpslld xmm0, xmm2, xmm1"},
	{kind: skCnt, asm: "vpsraw ymm0, ymm2, [rsi]"},
	{kind: skCnt, asm: "vpsllvd ymm0, ymm2, ymm3"}, {kind: skCnt, asm: "vpsllvq ymm0, ymm2, ymm3"}, {kind: skCnt, asm: "vpsrlvd ymm0, ymm2, ymm3"}, {kind: skCnt, asm: "vpsrlvq xmm0, xmm2, xmm3"},
	{kind: skCnt, asm: "vpsravd ymm0, ymm2, ymm3"},
	// floating point
	{kind: skF64, asm: "vaddpd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vsubpd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vmulpd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vdivpd ymm0, ymm1, ymm2"},
	{kind: skF64, asm: "vminpd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vmaxpd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vsqrtpd ymm0, ymm1"}, {kind: skF64, asm: "vaddsd xmm0, xmm1, xmm2"},
	{kind: skF64, asm: "vsubsd xmm0, xmm1, [rsi]"}, {kind: skF64, asm: "vmulsd xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vdivsd xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vsqrtsd xmm0, xmm1, xmm2"},
	{kind: skF64, asm: "vminsd xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vmaxsd xmm0, xmm1, xmm2"},
	{kind: skF32, asm: "vaddps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vsubps ymm0, ymm1, [rsi]"}, {kind: skF32, asm: "vmulps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vdivps ymm0, ymm1, ymm2"},
	{kind: skF32, asm: "vminps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vmaxps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vsqrtps ymm0, ymm1"}, {kind: skF32, asm: "vaddss xmm0, xmm1, xmm2"},
	{kind: skF32, asm: "vmulss xmm0, xmm1, [rsi]"}, {kind: skF32, asm: "vdivss xmm0, xmm1, xmm2"}, {kind: skF32, asm: "vsqrtss xmm0, xmm1, xmm2"}, {kind: skF32, asm: "vmaxss xmm0, xmm1, xmm2"},
	{kind: skF32, asm: "vaddsubps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vaddsubpd ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vhaddps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vhaddpd ymm0, ymm1, ymm2"},
	{kind: skF32, asm: "vhsubps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vhsubpd xmm0, xmm1, xmm2"},
	{kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 0"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 1"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 9"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 13"},
	{kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 17"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 24"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 30"}, {kind: skF32, asm: "vcmpps ymm0, ymm1, ymm2, 11"},
	{kind: skF64, asm: "vcmppd ymm0, ymm1, ymm2, 4"}, {kind: skF64, asm: "vcmppd ymm0, ymm1, ymm2, 12"}, {kind: skF64, asm: "vcmppd ymm0, ymm1, ymm2, 19"}, {kind: skF64, asm: "vcmppd ymm0, ymm1, ymm2, 31"},
	{kind: skF64, asm: "vcmpsd xmm0, xmm1, xmm2, 14"}, {kind: skF32, asm: "vcmpss xmm0, xmm1, xmm2, 22"}, {kind: skF64, asm: "vcmppd xmm0, xmm1, [rsi], 2"},
	{kind: skF64, asm: "vucomisd xmm0, xmm1"}, {kind: skF64, asm: "vcomisd xmm0, xmm1"}, {kind: skF32, asm: "vucomiss xmm0, xmm1"}, {kind: skF32, asm: "vcomiss xmm0, [rsi]"},
	{kind: skF32, asm: "vcvtdq2ps ymm0, ymm1"}, {kind: skF32, asm: "vcvtps2dq ymm0, ymm1"}, {kind: skF32, asm: "vcvttps2dq ymm0, ymm1"}, {kind: skF64, asm: "vcvtdq2pd ymm0, xmm1"},
	{kind: skF64, asm: "vcvtpd2dq xmm0, ymm1"}, {kind: skF64, asm: "vcvttpd2dq xmm0, ymm1"}, {kind: skF32, asm: "vcvtps2pd ymm0, xmm1"}, {kind: skF64, asm: "vcvtpd2ps xmm0, ymm1"},
	{kind: skF64, asm: "vcvtpd2ps xmm0, xmm1"}, {kind: skF32, asm: "vcvtps2pd ymm0, [rsi]"}, {kind: skF64, asm: "vcvtpd2dq xmm0, xmm1"},
	{kind: skF64, asm: "vcvtsd2ss xmm0, xmm1, xmm2"}, {kind: skF32, asm: "vcvtss2sd xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vcvtsd2si rax, xmm1"}, {kind: skF64, asm: "vcvttsd2si eax, xmm1"},
	{kind: skF32, asm: "vcvtss2si eax, xmm1"}, {kind: skF32, asm: "vcvttss2si rax, [rsi]"}, {kind: skF64, asm: "vcvtsi2sd xmm0, xmm1, rax"}, {kind: skF32, asm: "vcvtsi2ss xmm0, xmm1, eax"},
	{kind: skF32, asm: "vroundps ymm0, ymm1, 0x1"}, {kind: skF64, asm: "vroundpd ymm0, ymm1, 0x2"}, {kind: skF32, asm: "vroundss xmm0, xmm1, xmm2, 0x4"}, {kind: skF64, asm: "vroundsd xmm0, xmm1, xmm2, 0xb"},
	{kind: skF32, asm: "vdpps ymm0, ymm1, ymm2, 0xf1"}, {kind: skF32, asm: "vdpps xmm0, xmm1, xmm2, 0x7e"}, {kind: skF64, asm: "vdppd xmm0, xmm1, xmm2, 0x31"},
	// VRCPPS/VRSQRTPS are not compared: uvm returns the correctly rounded
	// value, the hardware an implementation-specific approximation.
	// FMA3
	{kind: skF64, asm: "vfmadd132pd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vfmadd213pd ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vfmadd231pd ymm0, ymm1, [rsi]"},
	{kind: skF32, asm: "vfmadd132ps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfmadd213ps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfmadd231ps xmm0, xmm1, xmm2"},
	{kind: skF64, asm: "vfmsub132pd ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfmsub213ps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vfmsub231pd xmm0, xmm1, xmm2"},
	{kind: skF64, asm: "vfnmadd132pd ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfnmadd213ps ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfnmadd231ps ymm0, ymm1, ymm2"},
	{kind: skF64, asm: "vfnmsub132pd ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfnmsub213ps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vfnmsub231pd ymm0, ymm1, ymm2"},
	{kind: skF64, asm: "vfmaddsub132pd ymm0, ymm1, ymm2"}, {kind: skF32, asm: "vfmaddsub213ps ymm0, ymm1, ymm2"}, {kind: skF64, asm: "vfmsubadd231pd ymm0, ymm1, ymm2"},
	{kind: skF32, asm: "vfmsubadd132ps ymm0, ymm1, ymm2"},
	{kind: skF64, asm: "vfmadd132sd xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vfmadd213sd xmm0, xmm1, [rsi]"}, {kind: skF32, asm: "vfmadd231ss xmm0, xmm1, xmm2"},
	{kind: skF32, asm: "vfmsub132ss xmm0, xmm1, xmm2"}, {kind: skF64, asm: "vfnmadd213sd xmm0, xmm1, xmm2"}, {kind: skF32, asm: "vfnmsub231ss xmm0, xmm1, [rsi]"},
	// F16C
	{kind: skInt, asm: "vcvtph2ps ymm0, xmm1"}, {kind: skInt, asm: "vcvtph2ps xmm0, [rsi]"}, {kind: skF32, asm: "vcvtps2ph xmm0, ymm1, 0"}, {kind: skF32, asm: "vcvtps2ph [rdi], xmm1, 4"},
	{kind: skF32, asm: "vcvtps2ph xmm0, ymm1, 3"},
	// gathers (indices from skCnt are small)
	{kind: skCnt, asm: "vpgatherdd ymm0, [rsi+ymm4*4], ymm5"}, {kind: skCnt, asm: "vgatherdpd ymm0, [rsi+xmm4*8], ymm5"}, {kind: skCnt, asm: "vgatherqps xmm0, [rsi+ymm4*2], xmm5"},
	{kind: skCnt, asm: "vpgatherqq xmm0, [rsi+xmm4*1], xmm5"},
	// XSAVE family (RAX/RDX select the components; the area is at
	// [rdi+64]). The x87 component is left out: the host's XSAVE reports
	// it in its initial state (XINUSE[0] = 0, the init optimisation) where
	// uvm, which does not track XINUSE, reports every component in use.
	// MXCSR_MASK (area bytes 28..31) is the CPU's: uvm reports 0xFFFF.
	{kind: skInt, asm: "xor ecx, ecx\n xgetbv\n and eax, 7"}, // the host may have AVX-512 state in XCR0 too
	{kind: skInt, asm: "mov eax, 6\n xor edx, edx\n xsave [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 2\n xor edx, edx\n xsave64 [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 6\n xor edx, edx\n xsavec [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 4\n xor edx, edx\n xsaveopt [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 6\n xor edx, edx\n xsave [rdi+64]\n vpxor ymm3, ymm3, ymm3\n vzeroall\n xrstor [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 6\n xor edx, edx\n xsavec [rdi+64]\n vzeroall\n mov eax, 4\n xrstor [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 2\n xor edx, edx\n xsave [rdi+64]\n mov eax, 6\n xrstor [rdi+64]", ignore: avxMXCSRMask},
	{kind: skInt, asm: "mov eax, 6\n xor edx, edx\n xsave [rdi+64]\n and byte ptr [rdi+64+512], 0xfb\n vpxor ymm3, ymm3, ymm3\n xrstor [rdi+64]", ignore: avxMXCSRMask},
}

// avxHarness state layout: ymm 0 (512), gpr 512 (128), rflags 640,
// mxcsr 648, mem 656 (512 bytes): 1168 bytes.
const (
	avOffGPR   = 512
	avOffFlags = 640
	avOffMXCSR = 648
	avOffMem   = 656
	avMemSize  = 1024
	avSize     = avOffMem + avMemSize
)

const avxHarness = `
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATE %d
#define OFFMEM %d
#define MEMSIZE %d
static uint8_t S[STATE] __attribute__((aligned(64)));
static uint8_t buf[MEMSIZE] __attribute__((aligned(64)));
void *g_state = S;
void *g_code;
extern void avx_run(void);

__asm__(
".intel_syntax noprefix\n.text\n.globl avx_run\navx_run:\n"
" push rbx\n push rbp\n push r12\n push r13\n push r14\n push r15\n"
" mov rax, [rip+g_state]\n"
" ldmxcsr [rax+648]\n"
YMMLOAD
" push qword ptr [rax+640]\n popfq\n"
" mov rcx,[rax+520]\n mov rdx,[rax+528]\n mov rbx,[rax+536]\n mov rbp,[rax+552]\n mov rsi,[rax+560]\n mov rdi,[rax+568]\n"
" mov r8,[rax+576]\n mov r9,[rax+584]\n mov r10,[rax+592]\n mov r11,[rax+600]\n mov r12,[rax+608]\n mov r13,[rax+616]\n mov r14,[rax+624]\n mov r15,[rax+632]\n"
" mov rax,[rax+512]\n"
" call qword ptr [rip+g_code]\n"
" pushfq\n push rax\n mov rax, [rip+g_state]\n"
" mov [rax+520],rcx\n mov [rax+528],rdx\n mov [rax+536],rbx\n mov [rax+552],rbp\n mov [rax+560],rsi\n mov [rax+568],rdi\n"
" mov [rax+576],r8\n mov [rax+584],r9\n mov [rax+592],r10\n mov [rax+600],r11\n mov [rax+608],r12\n mov [rax+616],r13\n mov [rax+624],r14\n mov [rax+632],r15\n"
" pop rcx\n mov [rax+512],rcx\n pop rcx\n mov [rax+640],rcx\n"
YMMSTORE
" stmxcsr [rax+648]\n"
" cld\n mov dword ptr [rsp-8], 0x1f80\n ldmxcsr [rsp-8]\n vzeroupper\n"
" pop r15\n pop r14\n pop r13\n pop r12\n pop rbp\n pop rbx\n ret\n"
".att_syntax\n");

TEMPLATES

static int hexv(int c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

int main(void) {
	static char line[8192];
	while (fgets(line, sizeof line, stdin)) {
		char *p = line;
		int idx = strtol(p, &p, 10);
		while (*p == ' ') p++;
		for (int i = 0; i < STATE; i++) S[i] = hexv(p[2*i]) << 4 | hexv(p[2*i+1]);
		uint64_t base = (uint64_t)(uintptr_t)buf;
		uint64_t *gpr = (uint64_t *)(S + 512);
		gpr[6] += base; gpr[7] += base;
		memcpy(buf, S + OFFMEM, MEMSIZE);
		g_code = starts[idx];
		avx_run();
		memcpy(S + OFFMEM, buf, MEMSIZE);
		gpr[6] -= base; gpr[7] -= base;
		for (char *c = starts[idx]; c < ends[idx]; c++) printf("%%02x", (uint8_t)*c);
		printf(" ");
		for (int i = 0; i < STATE; i++) printf("%%02x", S[i]);
		printf("\n");
		fflush(stdout);
	}
	return 0;
}
`

func avxHarnessSource() string {
	var load, store, tpl strings.Builder
	for i := range 16 {
		fmt.Fprintf(&load, "\" vmovdqu ymm%d, [rax+%d]\\n\"\n", i, 32*i)
		fmt.Fprintf(&store, "\" vmovdqu [rax+%d], ymm%d\\n\"\n", 32*i, i)
	}
	for i, t := range avxTemplates {
		asm := strings.ReplaceAll(t.asm, "\n", "\\n")
		fmt.Fprintf(&tpl, "__asm__(\".intel_syntax noprefix\\n.text\\navxt%d:\\n%s\\navxt%d_end:\\nret\\n.att_syntax\\n\");\n", i, asm, i)
		fmt.Fprintf(&tpl, "extern char avxt%d[], avxt%d_end[];\n", i, i)
	}
	tpl.WriteString("static char *starts[] = {")
	for i := range avxTemplates {
		fmt.Fprintf(&tpl, "avxt%d,", i)
	}
	tpl.WriteString("};\nstatic char *ends[] = {")
	for i := range avxTemplates {
		fmt.Fprintf(&tpl, "avxt%d_end,", i)
	}
	tpl.WriteString("};\n")
	s := fmt.Sprintf(avxHarness, avSize, avOffMem, avMemSize)
	s = strings.Replace(s, "YMMLOAD", load.String(), 1)
	s = strings.Replace(s, "YMMSTORE", store.String(), 1)
	return strings.Replace(s, "TEMPLATES", tpl.String(), 1)
}

type avState [avSize]byte

func (s *avState) u64(off int) uint64      { return binary.LittleEndian.Uint64(s[off:]) }
func (s *avState) put64(off int, v uint64) { binary.LittleEndian.PutUint64(s[off:], v) }

func avxMakeState(r *rand.Rand, kind int) avState {
	var s avState
	for i := 0; i < 512; i += 8 {
		s.put64(i, r.Uint64())
	}
	for i := range 16 {
		switch r.Intn(4) {
		case 0:
			s.put64(avOffGPR+8*i, uint64(r.Intn(64)))
		case 1:
			s.put64(avOffGPR+8*i, uint64(int64(r.Intn(200)-100)))
		default:
			s.put64(avOffGPR+8*i, r.Uint64())
		}
	}
	s.put64(avOffGPR+6*8, 128) // rsi = window+128
	s.put64(avOffGPR+7*8, 0)   // rdi = window
	s.put64(avOffGPR+4*8, 0)
	s.put64(avOffFlags, 0x202|uint64(r.Intn(1<<12))&statusMask)
	binary.LittleEndian.PutUint32(s[avOffMXCSR:], 0x1F80)
	for i := 0; i < avMemSize; i += 8 {
		s.put64(avOffMem+i, r.Uint64())
	}
	for i := 0; i < 512; i += 8 {
		switch r.Intn(6) {
		case 0:
			s.put64(i, 0)
		case 1:
			b := uint64(r.Intn(256)) * 0x0101010101010101
			s.put64(i, b^(r.Uint64()&0x00FF00FF00FF00FF*uint64(r.Intn(2))))
		case 2:
			s.put64(i, uint64(r.Intn(0x20000))*0x0000000100000001)
		}
	}
	switch kind {
	case skCnt:
		// xmm1 low qword: a shift count; ymm3: per-element counts;
		// ymm4: small gather indices; ymm5: a random mask.
		s.put64(32, uint64(r.Intn(70)))
		if r.Intn(4) == 0 {
			s.put64(32, r.Uint64())
		}
		s.put64(avOffMem+128, uint64(r.Intn(70)))
		for i := 0; i < 32; i++ {
			s[3*32+i] = byte(r.Intn(70))
			if i%4 != 0 && r.Intn(3) != 0 {
				s[3*32+i] = 0
			}
			s[4*32+i] = 0
			if i%8 == 0 {
				s[4*32+i] = byte(r.Intn(64)) // small dword and qword indices
			}
		}
	case skF64, skF32:
		binary.LittleEndian.PutUint32(s[avOffMXCSR:], sseMXCSRModes[r.Intn(len(sseMXCSRModes))])
		fill := func(off int) {
			if kind == skF64 {
				s.put64(off, randF64(r))
			} else {
				binary.LittleEndian.PutUint32(s[off:], randF32(r))
				binary.LittleEndian.PutUint32(s[off+4:], randF32(r))
			}
		}
		for i := 0; i < 512; i += 8 {
			fill(i)
		}
		for i := 0; i < 512; i += 8 {
			fill(avOffMem + i)
		}
		if r.Intn(3) == 0 {
			s.put64(avOffGPR, uint64(int64(r.Intn(1<<20)-1<<19)))
		}
	}
	// The XSAVE templates need the header of the area at [rdi+64] valid
	// for XRSTOR after XSAVE; XSAVE itself reads and keeps XSTATE_BV bits.
	clear(s[avOffMem+64+512 : avOffMem+64+576])
	return s
}

func avxRunUVM(t *testing.T, code []byte, s avState) (avState, string) {
	c := newTestCPU(t, code, false)
	c.SetCPUModel("x86-64-v3")
	for i := range 16 {
		c.regs.XMM[i] = vec{s.u64(32 * i), s.u64(32*i + 8)}
		c.regs.YMMH[i] = vec{s.u64(32*i + 16), s.u64(32*i + 24)}
		if i != 4 {
			c.regs.GPR[i] = s.u64(avOffGPR + 8*i)
		}
	}
	c.regs.GPR[6] += tData
	c.regs.GPR[7] += tData
	c.SetRFLAGS(s.u64(avOffFlags))
	c.regs.MXCSR = binary.LittleEndian.Uint32(s[avOffMXCSR:])
	if err := c.mm.Poke(s[avOffMem:avOffMem+avMemSize], tData); err != nil {
		t.Fatal(err)
	}
	e := runTest(t, c)
	if e.Reason != vm.ExitBreakpoint || e.PC != tCode+uint64(len(code)) {
		return s, fmt.Sprintf("exit %v at %#x (%s) why=%q", e.Reason, e.PC, c.Disasm(e.PC), e.Why)
	}
	var out avState
	r := c.Regs()
	for i := range 16 {
		out.put64(32*i, r.XMM[i][0])
		out.put64(32*i+8, r.XMM[i][1])
		out.put64(32*i+16, r.YMMH[i][0])
		out.put64(32*i+24, r.YMMH[i][1])
		out.put64(avOffGPR+8*i, r.GPR[i])
	}
	out.put64(avOffGPR+6*8, r.GPR[6]-tData)
	out.put64(avOffGPR+7*8, r.GPR[7]-tData)
	out.put64(avOffFlags, r.RFLAGS)
	binary.LittleEndian.PutUint32(out[avOffMXCSR:], r.MXCSR)
	if err := c.mm.Peek(out[avOffMem:avOffMem+avMemSize], tData); err != nil {
		t.Fatal(err)
	}
	return out, ""
}

func avxDiff(got, want *avState) string {
	var d []string
	for i := range 16 {
		g, w := got[32*i:32*i+32], want[32*i:32*i+32]
		if !bytes.Equal(g, w) {
			d = append(d, fmt.Sprintf("ymm%d %x want %x", i, g, w))
		}
		if i != 4 && got.u64(avOffGPR+8*i) != want.u64(avOffGPR+8*i) {
			d = append(d, fmt.Sprintf("gpr%d %#x want %#x", i, got.u64(avOffGPR+8*i), want.u64(avOffGPR+8*i)))
		}
	}
	const fm = statusMask | rfDF
	if g, w := got.u64(avOffFlags)&fm, want.u64(avOffFlags)&fm; g != w {
		d = append(d, fmt.Sprintf("flags %#x want %#x", g, w))
	}
	if g, w := binary.LittleEndian.Uint32(got[avOffMXCSR:]), binary.LittleEndian.Uint32(want[avOffMXCSR:]); g != w {
		d = append(d, fmt.Sprintf("mxcsr %#x want %#x", g, w))
	}
	for i := 0; i < avMemSize; i += 16 {
		g, w := got[avOffMem+i:avOffMem+i+16], want[avOffMem+i:avOffMem+i+16]
		if !bytes.Equal(g, w) {
			d = append(d, fmt.Sprintf("mem[%d] %x want %x", i, g, w))
		}
	}
	return strings.Join(d, "; ")
}

// hostHasAVX2 reports whether the host CPU has AVX2, FMA and F16C (and
// the OS enabled them: /proc/cpuinfo lists the usable flags).
func hostHasAVX2() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "flags") {
			f := " " + line + " "
			return strings.Contains(f, " avx2 ") && strings.Contains(f, " fma ") && strings.Contains(f, " f16c ") &&
				strings.Contains(f, " xsavec ") && strings.Contains(f, " xsaveopt ")
		}
	}
	return false
}

func TestAVXNativeDifferential(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a linux/amd64 host")
	}
	if !hostHasAVX2() {
		t.Skip("host CPU lacks AVX2/FMA/F16C/XSAVEC")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "h.c")
	bin := filepath.Join(dir, "h")
	if err := os.WriteFile(src, []byte(avxHarnessSource()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-static", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("cannot build the native harness: %v\n%s", err, out)
	}
	cases := 12
	if testing.Short() {
		cases = 3
	}
	if n, err := strconv.Atoi(os.Getenv("UVM_AVX_CASES")); err == nil && n > 0 {
		cases = n
	}
	rng := rand.New(rand.NewSource(16))
	var input bytes.Buffer
	var states []avState
	var idx []int
	for i, tpl := range avxTemplates {
		for range cases {
			s := avxMakeState(rng, tpl.kind)
			states = append(states, s)
			idx = append(idx, i)
			fmt.Fprintf(&input, "%d %x\n", i, s[:])
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &input
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("native harness: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	fails := map[int]int{}
	for k := 0; sc.Scan(); k++ {
		codeHex, stateHex, _ := strings.Cut(sc.Text(), " ")
		code, _ := hex.DecodeString(codeHex)
		var want avState
		b, _ := hex.DecodeString(stateHex)
		copy(want[:], b)
		i := idx[k]
		got, msg := avxRunUVM(t, code, states[k])
		acceptDppsNaNPayloads(avxTemplates[i].asm, got[:32], want[:32]) // ymm0
		for _, r := range avxTemplates[i].ignore {
			copy(got[avOffMem+r[0]:avOffMem+r[1]], want[avOffMem+r[0]:avOffMem+r[1]])
		}
		if msg == "" {
			msg = avxDiff(&got, &want)
		}
		if msg != "" {
			fails[i]++
			if fails[i] <= 2 {
				t.Errorf("%s (% x): %s", avxTemplates[i].asm, code, msg)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
