package decode

import "strings"

// InsnClass is an instruction's timing class: what a timing model
// (package timing, through package tasks) charges cycles by. The decoder
// sets it in every record (A64.Class), so an interpreter that counts
// classes adds one indexed increment per instruction and decodes nothing.
type InsnClass uint8

// Instruction classes.
const (
	ClassALU     InsnClass = iota // integer data processing, moves, compares, conditional select
	ClassMul                      // integer multiply and multiply-accumulate
	ClassDiv                      // integer divide
	ClassBranch                   // branches (taken or not: ClassCounts.Taken counts the taken ones)
	ClassLoad                     // loads (general and FP/SIMD registers, acquire forms, prefetch)
	ClassStore                    // stores (release forms, DC ZVA)
	ClassAtomic                   // exclusives and LSE atomics (load-linked / store-conditional, CAS, LD<op>)
	ClassFP                       // floating point arithmetic, conversions and compares
	ClassFPDiv                    // floating point divide and square root
	ClassSIMD                     // vector integer, permutes, crypto
	ClassBarrier                  // DMB, DSB, ISB
	ClassDC                       // DC CVAU/CVAC/CIVAC: one data cache line cleaned
	ClassIC                       // IC IVAU: one instruction cache line invalidated (broadcast)
	ClassSystem                   // SVC, BRK, NOP/hints, MRS/MSR, CLREX, undefined encodings
	NumInsnClasses
)

var insnClassNames = [NumInsnClasses]string{
	ClassALU: "alu", ClassMul: "mul", ClassDiv: "div", ClassBranch: "branch", ClassLoad: "load",
	ClassStore: "store", ClassAtomic: "atomic", ClassFP: "fp", ClassFPDiv: "fpdiv", ClassSIMD: "simd",
	ClassBarrier: "barrier", ClassDC: "dc", ClassIC: "ic", ClassSystem: "system",
}

// String is the class's name (the machine descriptions' cpi.NAME keys).
func (c InsnClass) String() string {
	if c < NumInsnClasses {
		return insnClassNames[c]
	}
	return "class?"
}

// ClassCounts counts retired instructions by class, and the taken
// branches among them (an interpreter's tally for the timing model).
type ClassCounts struct {
	N     [NumInsnClasses]uint64
	Taken uint64
}

// a64Class is the class of each integer, load/store, branch and system op
// (FP/SIMD ops are classified by a64SIMDClass).
var a64Class = func() (t [a64NumOps]InsnClass) {
	set := func(c InsnClass, ops ...A64Op) {
		for _, op := range ops {
			t[op] = c
		}
	}
	set(ClassMul, A64MADD, A64MSUB, A64SMADDL, A64SMSUBL, A64UMADDL, A64UMSUBL, A64SMULH, A64UMULH)
	set(ClassDiv, A64UDIV, A64SDIV)
	for op := A64LDRB; op <= A64STLR; op++ {
		t[op] = ClassLoad
	}
	set(ClassStore, A64STRB, A64STRH, A64STRW, A64STRX, A64STRV, A64STP, A64STPV, A64STLR, A64STLUR, A64DCZVA)
	set(ClassLoad, A64LDAPUR)
	set(ClassAtomic, A64LDXR, A64STXR, A64LDXP, A64STXP, A64LDOP, A64CAS, A64CASP)
	for op := A64B; op <= A64RET; op++ {
		t[op] = ClassBranch
	}
	set(ClassSystem, A64Undefined, A64SVC, A64BRK, A64NOP, A64CLREX, A64MRS, A64MSR)
	set(ClassBarrier, A64DMB, A64ISB)
	set(ClassDC, A64DCCVA)
	set(ClassIC, A64ICIVAU)
	return t
}()

// a64SIMDClass is the class of each FP/SIMD op, from its mnemonic:
// structure loads/stores by their direction, f* and cvtf as floating
// point (fdiv, fsqrt apart), everything else as vector.
var a64SIMDClass = func() (t [NumA64SIMDOps]InsnClass) {
	for i := range t {
		name := A64SIMDOpName(A64SIMDBase + A64Op(i))
		switch {
		case name == "fdiv" || name == "fsqrt":
			t[i] = ClassFPDiv
		case strings.HasPrefix(name, "f") || name == "cvtf":
			t[i] = ClassFP
		default:
			t[i] = ClassSIMD
		}
	}
	for _, op := range []A64Op{A64VLDST, A64VLDSTL, A64VLDR} {
		t[op-A64SIMDBase] = ClassLoad
	}
	return t
}()

// a64ClassOf is in's class.
func a64ClassOf(in *A64) InsnClass {
	switch {
	case in.Op < a64NumOps:
		return a64Class[in.Op]
	case in.Op >= A64SIMDBase && int(in.Op-A64SIMDBase) < NumA64SIMDOps:
		c := a64SIMDClass[in.Op-A64SIMDBase]
		if c == ClassLoad && in.Op != A64VLDR && in.Flags&SIMDLoad == 0 {
			c = ClassStore
		}
		return c
	}
	return ClassSystem
}

// x86ClassOf is in's class: by operation, and for the others by their
// memory operand (a memory destination of a move is a store; any other
// memory operand makes a load, read-modify-write forms included).
func x86ClassOf(in *X86) InsnClass {
	op := in.BaseOp()
	mem, x87 := -1, false
	for i := 0; i < int(in.NArgs) && i < len(in.Args); i++ {
		switch in.Args[i].Kind {
		case ArgMem:
			if mem < 0 {
				mem = i
			}
		case ArgX87:
			x87 = true
		}
	}
	switch op {
	case X86Cmpxchg, X86Cmpxchg8b, X86Cmpxchg16b:
		return ClassAtomic
	case X86Xadd, X86Xchg:
		if mem >= 0 {
			return ClassAtomic // XCHG with memory is locked
		}
		return ClassALU
	case X86Jmp, X86JmpInd, X86Jcc, X86Jrcxz, X86Loop, X86Loope, X86Loopne, X86Call, X86CallInd, X86Ret:
		return ClassBranch
	case X86Mul, X86Imul1, X86Imul, X86Mulx:
		return ClassMul
	case X86Div, X86Idiv:
		return ClassDiv
	case X86Fence:
		return ClassBarrier
	case X86Clflush:
		return ClassDC
	case X86Undefined, X86Syscall, X86Cpuid, X86Rdtsc, X86Rdtscp, X86Rdpid, X86Pause, X86Nop, X86Prefetch,
		X86Int3, X86Int, X86Ud, X86Priv, X86Iret, X86MovSeg, X86Rdfsbase, X86Rdgsbase, X86Wrfsbase, X86Wrgsbase:
		return ClassSystem
	case X86Push, X86Pushf, X86Enter, X86Movs, X86Stos:
		return ClassStore
	case X86Pop, X86Popf, X86Leave, X86Lods, X86Scas, X86Cmps, X86Xlat:
		return ClassLoad
	case X86Lea:
		return ClassALU
	}
	if in.Lock {
		return ClassAtomic
	}
	switch {
	case mem == 0 && (op == X86Mov || op == X86Setcc || op == X86Movbe || op >= X86SSEBase):
		return ClassStore
	case mem >= 0:
		return ClassLoad
	case x87:
		return ClassFP
	case op >= X86SSEBase:
		return ClassSIMD
	}
	return ClassALU
}
