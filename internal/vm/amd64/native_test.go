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

	"github.com/uvm-emu/uvm/internal/decode"
	"github.com/uvm-emu/uvm/internal/vm"
)

// Differential test against the host CPU: when the host is linux/amd64 and
// gcc is installed, a small C harness runs each instruction template
// natively with a given register/flag/memory state and prints the
// resulting state; uvm runs the same bytes from the same state and the two
// must agree on every general register (except RSP), on the flags the
// architecture defines for the template, and on the memory window.

// Flag masks for templates (which status flags are architecturally defined).
const (
	mStatus = statusMask | rfDF
	mNoAF   = mStatus &^ rfAF
	mLogic  = mStatus &^ rfAF
	mCO     = rfCF | rfOF | rfDF
	mZF     = rfZF | rfDF
	mNone   = rfDF
	mCF     = rfCF | rfDF
	// mShift marks the shifts and rotates, whose defined flags depend on
	// the count: shiftFlagMask computes them for each state.
	mShift = 1 << 63
)

// shiftFlagMask returns the flags the SDM defines after the shift or
// rotate template asm when RCX holds rcx (the count is CL or the
// immediate). A masked count of 0 changes no flag. Otherwise: OF is
// defined only for a count of 1 (Intel and AMD compute different values
// for larger counts) and AF is undefined for SHL/SHR/SAR/SHLD/SHRD; CF
// is undefined for SHL/SHR counts of at least the operand size; SHLD/SHRD
// counts above the operand size (16-bit only) leave every flag undefined;
// rotates leave SF, ZF, AF and PF unchanged.
func shiftFlagMask(asm string, rcx uint64) uint64 {
	op, operands, _ := strings.Cut(asm, " ")
	dst, _, _ := strings.Cut(operands, ",")
	width := uint64(32)
	switch {
	case strings.HasPrefix(dst, "byte"), dst == "al", dst == "bl", dst == "cl", dst == "dl", dst == "ah", dst == "bh":
		width = 8
	case strings.HasPrefix(dst, "word"), dst == "ax", dst == "bx", dst == "cx", dst == "dx":
		width = 16
	case strings.HasPrefix(dst, "qword"), strings.HasPrefix(dst, "r"):
		width = 64
	}
	count := rcx & 0xff
	if i := strings.LastIndex(asm, ", "); asm[i+2:] != "cl" {
		n, err := strconv.ParseUint(asm[i+2:], 0, 8)
		if err != nil {
			panic("shift template " + asm + ": bad count")
		}
		count = n
	}
	if width == 64 {
		count &= 63
	} else {
		count &= 31
	}
	if count == 0 {
		return mStatus
	}
	var m uint64
	switch op {
	case "shl", "shr", "sar":
		m = rfCF | rfSF | rfZF | rfPF | rfDF
		if op != "sar" && count >= width {
			m &^= rfCF
		}
	case "shld", "shrd":
		if count > width {
			return mNone
		}
		m = rfCF | rfSF | rfZF | rfPF | rfDF
	case "rol", "ror", "rcl", "rcr":
		m = mStatus &^ rfOF
	default:
		panic("shift template " + asm + ": unknown mnemonic")
	}
	if count == 1 {
		m |= rfOF
	}
	return m
}

// Template kinds: how registers are chosen.
const (
	kPlain = iota // random registers
	kCnt          // RCX a small shift/loop count (0..70)
	kCnt16        // RCX 0..16 (16-bit SHLD/SHRD: larger counts are undefined)
	kBits         // RCX a signed bit offset within the memory window
	kStr          // string ops: RCX 0..8, window filled from a small alphabet
	kXlat         // RBX points into the window
	kBextr        // RCX a BEXTR control: start and length mostly in 0..70
	kCanon        // RBX a canonical address (WRFSBASE/WRGSBASE)
)

type nativeTemplate struct {
	mask uint64
	kind int
	asm  string
	code string
}

// nativeTemplates were assembled with GNU as (.intel_syntax noprefix).
var nativeTemplates = []nativeTemplate{
	{mStatus, kPlain, "add eax, ebx", "01d8"},
	{mStatus, kPlain, "add al, bh", "00f8"},
	{mStatus, kPlain, "add ax, bx", "6601d8"},
	{mStatus, kPlain, "add rax, rbx", "4801d8"},
	{mStatus, kPlain, "add rax, -5", "4883c0fb"},
	{mStatus, kPlain, "add eax, 0x7fffffff", "05ffffff7f"},
	{mStatus, kPlain, "add byte ptr [r8], bl", "410018"},
	{mStatus, kPlain, "add word ptr [r8+2], bx", "6641015802"},
	{mStatus, kPlain, "add dword ptr [r8+4], ebx", "41015804"},
	{mStatus, kPlain, "add qword ptr [r8+8], rbx", "49015808"},
	{mStatus, kPlain, "add rbx, qword ptr [r8+8]", "49035808"},
	{mStatus, kPlain, "adc eax, ebx", "11d8"},
	{mStatus, kPlain, "adc al, bl", "10d8"},
	{mStatus, kPlain, "adc ax, bx", "6611d8"},
	{mStatus, kPlain, "adc rax, rbx", "4811d8"},
	{mStatus, kPlain, "adc rax, -1", "4883d0ff"},
	{mStatus, kPlain, "adc qword ptr [r8], rbx", "491118"},
	{mStatus, kPlain, "sbb eax, ebx", "19d8"},
	{mStatus, kPlain, "sbb al, bl", "18d8"},
	{mStatus, kPlain, "sbb ah, bl", "18dc"},
	{mStatus, kPlain, "sbb ax, bx", "6619d8"},
	{mStatus, kPlain, "sbb rax, rbx", "4819d8"},
	{mStatus, kPlain, "sbb rax, 1", "4883d801"},
	{mStatus, kPlain, "sbb eax, eax", "19c0"},
	{mStatus, kPlain, "sub eax, ebx", "29d8"},
	{mStatus, kPlain, "sub al, bl", "28d8"},
	{mStatus, kPlain, "sub ax, bx", "6629d8"},
	{mStatus, kPlain, "sub rax, rbx", "4829d8"},
	{mStatus, kPlain, "sub rax, 0x12345678", "482d78563412"},
	{mStatus, kPlain, "sub dword ptr [r8], 7", "41832807"},
	{mStatus, kPlain, "cmp eax, ebx", "39d8"},
	{mStatus, kPlain, "cmp al, bl", "38d8"},
	{mStatus, kPlain, "cmp ax, bx", "6639d8"},
	{mStatus, kPlain, "cmp rax, rbx", "4839d8"},
	{mStatus, kPlain, "cmp byte ptr [r8], 0x80", "41803880"},
	{mStatus, kPlain, "cmp rbx, qword ptr [r8+8]", "493b5808"},
	{mLogic, kPlain, "and eax, ebx", "21d8"},
	{mLogic, kPlain, "and al, bl", "20d8"},
	{mLogic, kPlain, "and rax, rbx", "4821d8"},
	{mLogic, kPlain, "and rax, -16", "4883e0f0"},
	{mLogic, kPlain, "and word ptr [r8], bx", "66412118"},
	{mLogic, kPlain, "or eax, ebx", "09d8"},
	{mLogic, kPlain, "or ch, bl", "08dd"},
	{mLogic, kPlain, "or rax, rbx", "4809d8"},
	{mLogic, kPlain, "or qword ptr [r8], rbx", "490918"},
	{mLogic, kPlain, "xor eax, ebx", "31d8"},
	{mLogic, kPlain, "xor al, bl", "30d8"},
	{mLogic, kPlain, "xor rax, rbx", "4831d8"},
	{mLogic, kPlain, "xor eax, eax", "31c0"},
	{mLogic, kPlain, "test eax, ebx", "85d8"},
	{mLogic, kPlain, "test al, bl", "84d8"},
	{mLogic, kPlain, "test rax, rbx", "4885d8"},
	{mLogic, kPlain, "test ah, 0x81", "f6c481"},
	{mStatus, kPlain, "inc eax", "ffc0"},
	{mStatus, kPlain, "inc al", "fec0"},
	{mStatus, kPlain, "inc ax", "66ffc0"},
	{mStatus, kPlain, "inc rax", "48ffc0"},
	{mStatus, kPlain, "inc qword ptr [r8]", "49ff00"},
	{mStatus, kPlain, "dec eax", "ffc8"},
	{mStatus, kPlain, "dec bl", "fecb"},
	{mStatus, kPlain, "dec rbx", "48ffcb"},
	{mStatus, kPlain, "dec word ptr [r8]", "6641ff08"},
	{mStatus, kPlain, "neg eax", "f7d8"},
	{mStatus, kPlain, "neg al", "f6d8"},
	{mStatus, kPlain, "neg ax", "66f7d8"},
	{mStatus, kPlain, "neg rax", "48f7d8"},
	{mStatus, kPlain, "neg dword ptr [r8]", "41f718"},
	{mNone, kPlain, "not eax", "f7d0"},
	{mNone, kPlain, "not al", "f6d0"},
	{mNone, kPlain, "not rax", "48f7d0"},
	{mCO, kPlain, "mul ebx", "f7e3"},
	{mCO, kPlain, "mul bl", "f6e3"},
	{mCO, kPlain, "mul bx", "66f7e3"},
	{mCO, kPlain, "mul rbx", "48f7e3"},
	{mCO, kPlain, "mul qword ptr [r8]", "49f720"},
	{mCO, kPlain, "imul ebx", "f7eb"},
	{mCO, kPlain, "imul bl", "f6eb"},
	{mCO, kPlain, "imul bx", "66f7eb"},
	{mCO, kPlain, "imul rbx", "48f7eb"},
	{mCO, kPlain, "imul eax, ebx", "0fafc3"},
	{mCO, kPlain, "imul ax, bx", "660fafc3"},
	{mCO, kPlain, "imul rax, rbx", "480fafc3"},
	{mCO, kPlain, "imul eax, ebx, 13", "6bc30d"},
	{mCO, kPlain, "imul rax, rbx, -7", "486bc3f9"},
	{mCO, kPlain, "imul ax, bx, 300", "6669c32c01"},
	{mCO, kPlain, "imul rbx, qword ptr [r8], 3", "496b1803"},
	{mNone, kPlain, "div ebx", "f7f3"},
	{mNone, kPlain, "div bl", "f6f3"},
	{mNone, kPlain, "div bx", "66f7f3"},
	{mNone, kPlain, "div rbx", "48f7f3"},
	{mNone, kPlain, "idiv ebx", "f7fb"},
	{mNone, kPlain, "idiv bl", "f6fb"},
	{mNone, kPlain, "idiv bx", "66f7fb"},
	{mNone, kPlain, "idiv rbx", "48f7fb"},
	{mShift, kCnt, "shl eax, cl", "d3e0"},
	{mShift, kCnt, "shl al, cl", "d2e0"},
	{mShift, kCnt, "shl ax, cl", "66d3e0"},
	{mShift, kCnt, "shl rax, cl", "48d3e0"},
	{mShift, kCnt, "shr eax, cl", "d3e8"},
	{mShift, kCnt, "shr bl, cl", "d2eb"},
	{mShift, kCnt, "shr bx, cl", "66d3eb"},
	{mShift, kCnt, "shr rbx, cl", "48d3eb"},
	{mShift, kCnt, "sar eax, cl", "d3f8"},
	{mShift, kCnt, "sar bl, cl", "d2fb"},
	{mShift, kCnt, "sar bx, cl", "66d3fb"},
	{mShift, kCnt, "sar rbx, cl", "48d3fb"},
	{mShift, kCnt, "shl byte ptr [r8], cl", "41d220"},
	{mShift, kCnt, "sar qword ptr [r8], cl", "49d338"},
	{mShift, kPlain, "shl eax, 1", "d1e0"},
	{mShift, kPlain, "shl al, 1", "d0e0"},
	{mShift, kPlain, "shr rax, 1", "48d1e8"},
	{mShift, kPlain, "sar ax, 1", "66d1f8"},
	{mShift, kPlain, "shr bl, 1", "d0eb"},
	{mShift, kPlain, "shl eax, 5", "c1e005"},
	{mShift, kPlain, "shr rax, 63", "48c1e83f"},
	{mShift, kPlain, "sar eax, 31", "c1f81f"},
	{mShift, kPlain, "shl ax, 9", "66c1e009"},
	// Byte and word shifts by an immediate below the width are
	// specialised (merging into the register); at the width or more,
	// or on a high-byte register, they stay generic.
	{mShift, kPlain, "shr bl, 7", "c0eb07"},
	{mShift, kPlain, "sar al, 3", "c0f803"},
	{mShift, kPlain, "shl bl, 8", "c0e308"},
	{mShift, kPlain, "shr bx, 15", "66c1eb0f"},
	{mShift, kPlain, "sar bx, 16", "66c1fb10"},
	{mShift, kPlain, "shl ah, 2", "c0e402"},
	{mShift, kPlain, "shr dil, 2", "40c0ef02"},
	{mShift, kPlain, "sar r9w, 9", "6641c1f909"},
	{mShift, kCnt, "rol eax, cl", "d3c0"},
	{mShift, kCnt, "rol al, cl", "d2c0"},
	{mShift, kCnt, "rol ax, cl", "66d3c0"},
	{mShift, kCnt, "rol rax, cl", "48d3c0"},
	{mShift, kCnt, "ror eax, cl", "d3c8"},
	{mShift, kCnt, "ror bl, cl", "d2cb"},
	{mShift, kCnt, "ror bx, cl", "66d3cb"},
	{mShift, kCnt, "ror rbx, cl", "48d3cb"},
	{mShift, kPlain, "rol eax, 1", "d1c0"},
	{mShift, kPlain, "ror al, 1", "d0c8"},
	{mShift, kPlain, "rol rax, 1", "48d1c0"},
	{mShift, kPlain, "ror bx, 1", "66d1cb"},
	{mShift, kCnt, "rcl eax, cl", "d3d0"},
	{mShift, kCnt, "rcl al, cl", "d2d0"},
	{mShift, kCnt, "rcl ax, cl", "66d3d0"},
	{mShift, kCnt, "rcl rax, cl", "48d3d0"},
	{mShift, kCnt, "rcr eax, cl", "d3d8"},
	{mShift, kCnt, "rcr bl, cl", "d2db"},
	{mShift, kCnt, "rcr bx, cl", "66d3db"},
	{mShift, kCnt, "rcr rbx, cl", "48d3db"},
	{mShift, kPlain, "rcl eax, 1", "d1d0"},
	{mShift, kPlain, "rcr al, 1", "d0d8"},
	{mShift, kPlain, "rcr rax, 1", "48d1d8"},
	{mShift, kPlain, "rcl bx, 1", "66d1d3"},
	{mShift, kCnt, "shld eax, ebx, cl", "0fa5d8"},
	{mShift, kCnt, "shld rax, rbx, cl", "480fa5d8"},
	{mShift, kCnt, "shrd eax, ebx, cl", "0fadd8"},
	{mShift, kCnt, "shrd rax, rbx, cl", "480fadd8"},
	{mShift, kCnt16, "shld ax, bx, cl", "660fa5d8"},
	{mShift, kCnt16, "shrd ax, bx, cl", "660fadd8"},
	{mShift, kPlain, "shld eax, ebx, 1", "0fa4d801"},
	{mShift, kPlain, "shrd rax, rbx, 1", "480facd801"},
	{mShift, kPlain, "shld rax, rbx, 17", "480fa4d811"},
	{mShift, kPlain, "shrd dword ptr [r8], ebx, 9", "410fac1809"},
	{mCF, kPlain, "bt eax, ebx", "0fa3d8"},
	{mCF, kPlain, "bt rax, rbx", "480fa3d8"},
	{mCF, kPlain, "bt ax, bx", "660fa3d8"},
	{mCF, kPlain, "bts eax, ebx", "0fabd8"},
	{mCF, kPlain, "btr rax, rbx", "480fb3d8"},
	{mCF, kPlain, "btc ax, bx", "660fbbd8"},
	{mCF, kPlain, "bt eax, 17", "0fbae011"},
	{mCF, kPlain, "bts rax, 63", "480fbae83f"},
	{mCF, kPlain, "btr dword ptr [r8], 30", "410fba301e"},
	{mCF, kPlain, "btc qword ptr [r8], 40", "490fba3828"},
	{mCF, kBits, "bt dword ptr [r8], ecx", "410fa308"},
	{mCF, kBits, "bts qword ptr [r8], rcx", "490fab08"},
	{mCF, kBits, "btr word ptr [r8], cx", "66410fb308"},
	{mCF, kBits, "btc dword ptr [r8], ecx", "410fbb08"},
	{mCF, kBits, "lock bts qword ptr [r8], rcx", "f0490fab08"},
	{mZF, kPlain, "bsf eax, ebx", "0fbcc3"},
	{mZF, kPlain, "bsf rax, rbx", "480fbcc3"},
	{mZF, kPlain, "bsr eax, ebx", "0fbdc3"},
	{mZF, kPlain, "bsr rax, rbx", "480fbdc3"},
	{mZF, kPlain, "bsf ax, bx", "660fbcc3"},
	{mStatus, kPlain, "popcnt eax, ebx", "f30fb8c3"},
	{mStatus, kPlain, "popcnt rax, rbx", "f3480fb8c3"},
	{mNone, kPlain, "bswap eax", "0fc8"},
	{mNone, kPlain, "bswap rax", "480fc8"},
	{mNone, kPlain, "movzx eax, bl", "0fb6c3"},
	{mNone, kPlain, "movzx eax, bh", "0fb6c7"},
	{mNone, kPlain, "movzx rax, bx", "480fb7c3"},
	{mNone, kPlain, "movsx eax, bl", "0fbec3"},
	{mNone, kPlain, "movsx rax, bx", "480fbfc3"},
	{mNone, kPlain, "movsxd rax, ebx", "4863c3"},
	{mNone, kPlain, "movsx ax, bl", "660fbec3"},
	// Memory sources: X86MovzxLd/X86MovsxLd when specialised.
	{mNone, kPlain, "movzx eax, byte ptr [r8]", "410fb600"},
	{mNone, kPlain, "movzx rbx, word ptr [r8+2]", "490fb75802"},
	{mNone, kPlain, "movsx eax, byte ptr [r8+1]", "410fbe4001"},
	{mNone, kPlain, "movsx rcx, word ptr [r8+4]", "490fbf4804"},
	{mNone, kPlain, "movsxd rdx, dword ptr [r8+8]", "49635008"},
	{mNone, kPlain, "movsx ecx, word ptr [r8+6]", "410fbf4806"},
	{mNone, kPlain, "movzx ax, byte ptr [r8+3]", "66410fb64003"},
	{mNone, kPlain, "movsx rbx, byte ptr [r8+5]", "490fbe5805"},
	{mNone, kPlain, "cbw", "6698"},
	{mNone, kPlain, "cwde", "98"},
	{mNone, kPlain, "cdqe", "4898"},
	{mNone, kPlain, "cwd", "6699"},
	{mNone, kPlain, "cdq", "99"},
	{mNone, kPlain, "cqo", "4899"},
	{mNone, kPlain, "xchg eax, ebx", "93"},
	{mNone, kPlain, "xchg al, bh", "86f8"},
	{mNone, kPlain, "xchg rax, qword ptr [r8]", "498700"},
	{mStatus, kPlain, "xadd eax, ebx", "0fc1d8"},
	{mStatus, kPlain, "xadd rax, rbx", "480fc1d8"},
	{mStatus, kPlain, "lock xadd dword ptr [r8], ebx", "f0410fc118"},
	{mStatus, kPlain, "xadd bl, al", "0fc0c3"},
	{mStatus, kPlain, "cmpxchg ebx, ecx", "0fb1cb"},
	{mStatus, kPlain, "cmpxchg rbx, rcx", "480fb1cb"},
	{mStatus, kPlain, "cmpxchg bl, cl", "0fb0cb"},
	{mStatus, kPlain, "cmpxchg bx, cx", "660fb1cb"},
	{mStatus, kPlain, "lock cmpxchg qword ptr [r8], rcx", "f0490fb108"},
	{mStatus, kPlain, "cmpxchg dword ptr [r8], ecx", "410fb108"},
	{mZF, kPlain, "cmpxchg8b qword ptr [r8]", "410fc708"},
	{mZF, kPlain, "lock cmpxchg16b xmmword ptr [r8]", "f0490fc708"},
	{mStatus, kPlain, "lahf", "9f"},
	{mStatus, kPlain, "sahf", "9e"},
	{mStatus, kPlain, "stc", "f9"},
	{mStatus, kPlain, "clc", "f8"},
	{mStatus, kPlain, "cmc", "f5"},
	{mStatus, kPlain, "seto al; setno bl; setb cl; setae dl; sete sil; setne dil; setbe r10b; seta r11b", "0f90c00f91c30f92c10f93c2400f94c6400f95c7410f96c2410f97c3"},
	{mStatus, kPlain, "sets al; setns bl; setp cl; setnp dl; setl sil; setge dil; setle r10b; setg r11b", "0f98c00f99c30f9ac10f9bc2400f9cc6400f9dc7410f9ec2410f9fc3"},
	{mStatus, kPlain, "cmovo eax, ebx; cmovno ecx, edx; cmovb esi, edi; cmovae r10d, r11d", "0f40c30f41ca0f42f7450f43d3"},
	{mStatus, kPlain, "cmove rax, rbx; cmovne rcx, rdx; cmovbe rsi, rdi; cmova r10, r11", "480f44c3480f45ca480f46f74d0f47d3"},
	{mStatus, kPlain, "cmovs eax, ebx; cmovns ecx, edx; cmovp esi, edi; cmovnp r10, r11", "0f48c30f49ca0f4af74d0f4bd3"},
	{mStatus, kPlain, "cmovl ax, bx; cmovge rcx, rdx; cmovle esi, edi; cmovg r10, r11", "660f4cc3480f4dca0f4ef74d0f4fd3"},
	// Register forms after lazy flag producers (X86SetccR, X86CmovRR,
	// X86MovzxRR/X86MovsxRR when specialised; SETcc AH stays generic).
	{mStatus, kPlain, "cmp eax, ebx; setl cl; setb dl; cmovg esi, edi; cmovbe r8, r9", "39d80f9cc10f92c20f4ff74d0f46c1"},
	{mStatus, kPlain, "test eax, eax; sete al; movzx eax, al; setne ah", "85c00f94c00fb6c00f95c4"},
	{mStatus, kPlain, "movzx ecx, sil; movsx r8d, r9w; movsx rdx, r10b; cmovl eax, ecx", "400fb6ce450fbfc1490fbed20f4cc1"},
	{mStatus, kPlain, "cmp eax, ebx; seto al; setb bl; sete cl; setbe dl; sets sil; setp dil; setl r10b; setle r11b", "39d80f90c00f92c30f94c10f96c2400f98c6400f9ac7410f9cc2410f9ec3"},
	{mStatus, kPlain, "cmp ax, bx; setg al; setge bl; seta cl; setae dl", "6639d80f9fc00f9dc30f97c10f93c2"},
	{mStatus, kPlain, "cmp rax, rbx; setg al; setge bl; seta cl; setae dl; setl r10b; setle r11b", "4839d80f9fc00f9dc30f97c10f93c2410f9cc2410f9ec3"},
	{mStatus, kPlain, "test eax, ebx; setg al; setge bl; seta cl; setae dl; setl r10b; setle r11b", "85d80f9fc00f9dc30f97c10f93c2410f9cc2410f9ec3"},
	{mStatus, kPlain, "cmp al, bl; jl 1f; mov ecx, 7; 1: jbe 2f; mov edx, 9; 2: nop", "38d87c05b9070000007605ba0900000090"},
	// Byte and word CMP/TEST in their specialised forms, with the Jcc fast paths.
	{mStatus, kPlain, "cmp ax, 0x8001; jb 1f; mov ecx, 7; 1: jg 2f; mov edx, 9; 2: nop", "663d01807205b9070000007f05ba0900000090"},
	{mStatus, kPlain, "test ax, bx; jle 1f; mov ecx, 7; 1: js 2f; mov edx, 9; 2: nop", "6685d87e05b9070000007805ba0900000090"},
	{mStatus, kPlain, "cmp cx, word ptr [r8+2]", "66413b4802"},
	{mStatus, kPlain, "cmp word ptr [r8+2], 0x7fff", "6641817802ff7f"},
	{mStatus, kPlain, "test byte ptr [r8+1], dl", "41845001"},
	{mStatus, kPlain, "cmp al, 0x80", "3c80"},
	{mStatus, kPlain, "test al, 0x81; setp cl", "a8810f9ac1"},
	{mStatus, kPlain, "lea rax, [rbx+rcx*4+0x10]; lea ecx, [rbx+rdx*8-1]; lea dx, [rbx+rsi]", "488d448b108d4cd3ff668d1433"},
	{mStatus, kPlain, "mov eax, ebx; mov ah, cl; mov dl, bh; mov bx, cx", "89d888cc88fa6689cb"},
	{mStatus, kPlain, "mov rax, qword ptr [r8]; mov ebx, dword ptr [r8+4]; mov cx, word ptr [r8+6]; mov dh, byte ptr [rsi+1]", "498b00418b580466418b48068a7601"},
	{mStatus, kPlain, "mov qword ptr [r8], rbx; mov dword ptr [r8+8], ecx; mov word ptr [r8+12], dx; mov byte ptr [rdi+14], ah", "49891841894808664189500c88670e"},
	{mStatus, kPlain, "mov byte ptr [r8], 0x90; mov word ptr [r8+2], -2; mov dword ptr [r8+4], -3; mov qword ptr [r8+8], -4", "41c600906641c74002feff41c74004fdffffff49c74008fcffffff"},
	{mStatus, kPlain, "push rbx; push qword ptr [r8]; pop rax; pop qword ptr [r8+8]", "5341ff3058418f4008"},
	{mStatus, kPlain, "pushfq; pop rax; and eax, 0xcd5", "9c5825d50c0000"},
	{mStatus, kPlain, "and ebx, 0xcd5; push rbx; popfq", "81e3d50c0000539d"},
	{mStatus, kPlain, "push rbx; push rcx; pop rcx; pop rbx; enter 24, 0; leave", "5351595bc8180000c9"},
	{mStatus, kXlat, "xlatb", "d7"},
	{mStatus, kStr, "cld; rep movsb", "fcf3a4"},
	{mStatus, kStr, "cld; rep movsq", "fcf348a5"},
	{mStatus, kStr, "std; rep movsd", "fdf3a5"},
	{mStatus, kStr, "cld; rep stosb", "fcf3aa"},
	{mStatus, kStr, "cld; rep stosq", "fcf348ab"},
	{mStatus, kStr, "std; rep stosw", "fd66f3ab"},
	{mStatus, kStr, "cld; lodsq", "fc48ad"},
	{mStatus, kStr, "cld; repne scasb", "fcf2ae"},
	{mStatus, kStr, "cld; repe scasw", "fc66f3af"},
	{mStatus, kStr, "std; repe cmpsb", "fdf3a6"},
	{mStatus, kStr, "cld; repe cmpsq", "fcf348a7"},
	{mStatus, kStr, "cld; repne cmpsd", "fcf2a7"},
	{mStatus, kStr, "cld; movsb; movsw; stosd; scasb; cmpsw", "fca466a5abae66a7"},
	{mStatus, kPlain, "jrcxz 1f; mov eax, 1; 1: nop", "e305b80100000090"},
	{mStatus, kCnt, "1: inc eax; loop 1b", "ffc0e2fc"},
	{mStatus, kCnt, "1: inc eax; cmp eax, 5; loopne 1b", "ffc083f805e0f9"},
	{mStatus, kPlain, "cmpxchg eax, ebx; sete cl", "0fb1d80f94c1"},
}

// Fixed pointers (the harness maps its buffer at the same address).
const (
	nBuf    = tData         // 64 KiB buffer
	nWin    = nBuf + 0x7f80 // compared window [nWin, nWin+nWinLen)
	nWinLen = 256
	nR8     = nBuf + 0x8000
	nRSI    = nBuf + 0x7fe0
	nRDI    = nBuf + 0x8020
)

const nativeHarness = `
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct state { uint64_t r[16]; uint64_t flags; };
void run_snippet(void *code, struct state *s);
__asm__(
".intel_syntax noprefix\n"
".globl run_snippet\n"
"run_snippet:\n"
" push rbx\n push rbp\n push r12\n push r13\n push r14\n push r15\n"
" push rsi\n push rdi\n"
" push qword ptr [rsi+128]\n popfq\n"
" mov rax,[rsi]\n mov rcx,[rsi+8]\n mov rdx,[rsi+16]\n mov rbx,[rsi+24]\n"
" mov rbp,[rsi+40]\n mov rdi,[rsi+56]\n mov r8,[rsi+64]\n mov r9,[rsi+72]\n"
" mov r10,[rsi+80]\n mov r11,[rsi+88]\n mov r12,[rsi+96]\n mov r13,[rsi+104]\n"
" mov r14,[rsi+112]\n mov r15,[rsi+120]\n mov rsi,[rsi+48]\n"
" call qword ptr [rsp]\n"
" pushfq\n cld\n push rsi\n mov rsi,[rsp+24]\n"
" mov [rsi],rax\n mov [rsi+8],rcx\n mov [rsi+16],rdx\n mov [rsi+24],rbx\n"
" mov [rsi+40],rbp\n mov [rsi+56],rdi\n mov [rsi+64],r8\n mov [rsi+72],r9\n"
" mov [rsi+80],r10\n mov [rsi+88],r11\n mov [rsi+96],r12\n mov [rsi+104],r13\n"
" mov [rsi+112],r14\n mov [rsi+120],r15\n"
" pop rax\n mov [rsi+48],rax\n pop rax\n mov [rsi+128],rax\n"
" add rsp,16\n pop r15\n pop r14\n pop r13\n pop r12\n pop rbp\n pop rbx\n ret\n"
".att_syntax prefix\n");

static sigjmp_buf jb;
static void handler(int sig) { siglongjmp(jb, sig); }

static int unhex(const char *s, unsigned char *out, int max) {
	int n = 0;
	while (s[0] && s[1] && n < max) { unsigned v; sscanf(s, "%2x", &v); out[n++] = v; s += 2; }
	return n;
}

int main(void) {
	unsigned char *buf = mmap((void *)0x10000000, 0x10000, PROT_READ|PROT_WRITE,
		MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED, -1, 0);
	unsigned char *code = mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC,
		MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || code == MAP_FAILED) { perror("mmap"); return 1; }
	struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = handler; sa.sa_flags = SA_NODEFER;
	sigaction(SIGFPE, &sa, 0); sigaction(SIGSEGV, &sa, 0); sigaction(SIGILL, &sa, 0);
	sigaction(SIGBUS, &sa, 0); sigaction(SIGTRAP, &sa, 0);
	static char line[65536];
	while (fgets(line, sizeof line, stdin)) {
		char *tok = strtok(line, " \n");
		if (!tok) continue;
		int n = unhex(tok, code, 4000);
		code[n] = 0xc3;
		struct state s;
		for (int i = 0; i < 16; i++) s.r[i] = strtoull(strtok(0, " \n"), 0, 16);
		s.flags = strtoull(strtok(0, " \n"), 0, 16);
		memset(buf, 0, 0x10000);
		unhex(strtok(0, " \n"), buf + 0x7f80, 256);
		int sig = sigsetjmp(jb, 1);
		if (sig) { printf("SIG %d\n", sig); fflush(stdout); continue; }
		run_snippet(code, &s);
		for (int i = 0; i < 16; i++) printf("%llx ", (unsigned long long)s.r[i]);
		printf("%llx ", (unsigned long long)s.flags);
		for (int i = 0; i < 256; i++) printf("%02x", buf[0x7f80 + i]);
		printf("\n");
		fflush(stdout);
	}
	return 0;
}
`

type nState struct {
	r     [16]uint64
	flags uint64
	mem   [nWinLen]byte
}

var interesting = []uint64{0, 1, 2, 3, 5, 7, 8, 15, 16, 31, 32, 33, 63, 64, 0x7f, 0x80, 0xff, 0x100,
	0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000,
	1 << 62, 1<<63 - 1, 1 << 63, 1<<64 - 1, 1<<64 - 2, 0x8000000000000001, 0xfffffffffffffffe}

func randValue(r *rand.Rand) uint64 {
	switch r.Intn(4) {
	case 0:
		return interesting[r.Intn(len(interesting))]
	case 1:
		return uint64(r.Intn(512)) - 256
	case 2:
		return r.Uint64() >> uint(r.Intn(64))
	}
	return r.Uint64()
}

func makeState(r *rand.Rand, tp *nativeTemplate) nState {
	var s nState
	for i := range s.r {
		s.r[i] = randValue(r)
	}
	s.r[8], s.r[6], s.r[7] = nR8, nRSI, nRDI
	s.flags = uint64(r.Intn(1<<12))&(statusMask) | 0x202
	for i := range s.mem {
		s.mem[i] = byte(r.Uint32())
	}
	switch tp.kind {
	case kCnt:
		s.r[1] = uint64(r.Intn(71))
		if r.Intn(4) == 0 {
			s.r[1] |= r.Uint64() &^ 0xff // only CL counts for shifts
		}
		if r.Intn(6) == 0 {
			// Counts 0 and 1 (or 32/64 for 1) define the most flags.
			s.r[1] = s.r[1]&^0xff | uint64(r.Intn(2)+32*r.Intn(3))
		}
		if strings.Contains(tp.asm, "loop") {
			s.r[1] = 1 + uint64(r.Intn(70)) // RCX=0 would loop 2^64 times
		}
	case kCnt16:
		s.r[1] = uint64(r.Intn(17))
	case kBits:
		s.r[1] = uint64(r.Intn(400) - 200)
	case kStr:
		s.r[1] = uint64(r.Intn(9))
		for i := range s.mem {
			s.mem[i] = byte(r.Intn(3))
		}
	case kXlat:
		s.r[3] = nBuf + 0x7f80
	case kBextr:
		s.r[1] = uint64(r.Intn(71)) | uint64(r.Intn(71))<<8
		if r.Intn(4) == 0 {
			s.r[1] |= r.Uint64() &^ 0xffff // only bits 15:0 count
		}
	case kCanon:
		s.r[3] = r.Uint64() >> (17 + uint(r.Intn(40)))
	}
	if strings.Contains(tp.asm, "cmpxchg") && r.Intn(2) == 0 {
		// Make the comparison succeed half of the time.
		off := nR8 - nWin
		switch {
		case strings.Contains(tp.asm, "cmpxchg8b"), strings.Contains(tp.asm, "cmpxchg16b"):
			s.r[0] = binary.LittleEndian.Uint64(s.mem[off:])
			s.r[2] = binary.LittleEndian.Uint64(s.mem[off+8:])
			if strings.Contains(tp.asm, "8b") {
				s.r[2] = s.r[0] >> 32
			}
		case strings.Contains(tp.asm, "[r8]"):
			s.r[0] = binary.LittleEndian.Uint64(s.mem[off:])
		default:
			s.r[0] = s.r[3]
		}
	}
	if strings.Contains(tp.asm, "div") && r.Intn(4) != 0 {
		// Mostly keep the quotient in range.
		s.r[2] = uint64(r.Intn(3)) - 1
		s.r[3] |= 0x80
	}
	return s
}

func (s *nState) line(code string) string {
	var b strings.Builder
	b.WriteString(code)
	for _, v := range s.r {
		fmt.Fprintf(&b, " %x", v)
	}
	fmt.Fprintf(&b, " %x %s", s.flags, hex.EncodeToString(s.mem[:]))
	return b.String()
}

// runUVM runs code from state s and returns the final state, or the exit
// reason when it did not return normally.
func runUVM(t *testing.T, code []byte, s nState) (nState, vm.ExitReason, string) {
	c := newTestCPU(t, append(code, 0xc3), false)
	if err := c.MM().Poke(s.mem[:], nWin); err != nil {
		t.Fatal(err)
	}
	for i, v := range s.r {
		if i != 4 {
			c.SetReg(i, v)
		}
	}
	c.SetRFLAGS(s.flags)
	e := c.Run(1 << 20)
	var out nState
	if e.Reason != vm.ExitBreakpoint || e.PC != tSentinel {
		return out, e.Reason, e.Why
	}
	for i := range out.r {
		out.r[i] = c.Reg(i)
	}
	out.flags = c.RFLAGS()
	_ = c.MM().Peek(out.mem[:], nWin)
	return out, vm.ExitBreakpoint, ""
}

// TestNativeDifferential compares with the host CPU twice: with the
// decoder's specialised forms and with the generic implementations only.
func TestNativeDifferential(t *testing.T) {
	t.Run("specialised", testNativeDifferential)
	t.Run("generic", func(t *testing.T) {
		decode.X86Specialize = false
		defer func() { decode.X86Specialize = true }()
		testNativeDifferential(t)
	})
}

func testNativeDifferential(t *testing.T) {
	perTemplate := 60
	if testing.Short() {
		perTemplate = 10
	}
	runNativeTemplates(t, nativeTemplates, perTemplate)
}

// runNativeTemplates runs every template perTemplate times from random
// states natively and under uvm and reports the differences.
func runNativeTemplates(t *testing.T, templates []nativeTemplate, perTemplate int) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs a linux/amd64 host")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "harness.c")
	bin := filepath.Join(dir, "harness")
	if err := os.WriteFile(src, []byte(nativeHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Skipf("cannot build the native harness: %v\n%s", err, out)
	}
	r := rand.New(rand.NewSource(1))
	type job struct {
		tp    *nativeTemplate
		code  []byte
		state nState
	}
	var jobs []job
	var input bytes.Buffer
	for i := range templates {
		tp := &templates[i]
		code, err := hex.DecodeString(tp.code)
		if err != nil {
			t.Fatalf("%s: %v", tp.asm, err)
		}
		for k := 0; k < perTemplate; k++ {
			s := makeState(r, tp)
			jobs = append(jobs, job{tp, code, s})
			input.WriteString(s.line(tp.code))
			input.WriteByte('\n')
		}
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &input
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fails := map[string]int{}
	for i := 0; sc.Scan(); i++ {
		j := jobs[i]
		f := strings.Fields(sc.Text())
		got, reason, why := runUVM(t, j.code, j.state)
		if f[0] == "SIG" {
			want := map[string]vm.ExitReason{"8": vm.ExitDivide, "11": vm.ExitFault, "4": vm.ExitUndefined}[f[1]]
			if reason != want {
				fails[j.tp.asm]++
				if fails[j.tp.asm] <= 2 {
					t.Errorf("%s: native signal %s, uvm exit %v (%s)\n  in: %s", j.tp.asm, f[1], reason, why, j.state.line(""))
				}
			}
			continue
		}
		if reason != vm.ExitBreakpoint {
			fails[j.tp.asm]++
			if fails[j.tp.asm] <= 2 {
				t.Errorf("%s: uvm exit %v (%s), native ran\n  in: %s", j.tp.asm, reason, why, j.state.line(""))
			}
			continue
		}
		var want nState
		for k := 0; k < 16; k++ {
			want.r[k], _ = strconv.ParseUint(f[k], 16, 64)
		}
		want.flags, _ = strconv.ParseUint(f[16], 16, 64)
		mem, _ := hex.DecodeString(f[17])
		copy(want.mem[:], mem)
		if (strings.HasPrefix(j.tp.asm, "bsf e") || strings.HasPrefix(j.tp.asm, "bsr e")) && uint32(j.state.r[3]) == 0 {
			// Zero source, 32-bit destination: AMD leaves the register
			// unchanged, Intel (uvm's model, and QEMU) zero-extends it.
			want.r[0] = uint64(uint32(want.r[0]))
		}
		var diffs []string
		for k := 0; k < 16; k++ {
			if k != 4 && got.r[k] != want.r[k] {
				diffs = append(diffs, fmt.Sprintf("r%d=%x want %x", k, got.r[k], want.r[k]))
			}
		}
		mask := j.tp.mask
		if mask == mShift {
			mask = shiftFlagMask(j.tp.asm, j.state.r[1])
		}
		if (got.flags^want.flags)&mask != 0 {
			diffs = append(diffs, fmt.Sprintf("flags=%x want %x (mask %x)", got.flags&0xcd5, want.flags&0xcd5, mask))
		}
		if got.mem != want.mem {
			for k := range got.mem {
				if got.mem[k] != want.mem[k] {
					diffs = append(diffs, fmt.Sprintf("mem[%#x]=%02x want %02x", nWin+uint64(k), got.mem[k], want.mem[k]))
					break
				}
			}
		}
		if len(diffs) > 0 {
			fails[j.tp.asm]++
			if fails[j.tp.asm] <= 2 {
				t.Errorf("%s: %s\n  in: %s", j.tp.asm, strings.Join(diffs, ", "), j.state.line(""))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d templates x %d states compared", len(templates), perTemplate)
}
