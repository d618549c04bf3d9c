package uprobes

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fibPath(t *testing.T, arch string) string {
	p := "../testdata/bin/" + arch + "/fib"
	if _, err := FileIdentity(p); err != nil {
		t.Skipf("%s: %v", p, err)
	}
	return p
}

func TestOpenExecutable(t *testing.T) {
	_, err := New(DefaultOptions()).OpenExecutable("/nonexistent/prog")
	assert.Error(t, err)
	_, err = New(DefaultOptions()).OpenExecutable("")
	assert.ErrorIs(t, err, ErrInvalid)

	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			sys := New(DefaultOptions())
			ex, err := sys.OpenExecutable(fibPath(t, arch))
			require.NoError(t, err)
			assert.False(t, ex.loaded.Load(), "symbols are loaded lazily")
			a, err := ex.Arch()
			require.NoError(t, err)
			assert.True(t, ex.loaded.Load())
			want := map[string]Arch{"arm64": ArchARM64, "amd64": ArchAMD64}[arch]
			assert.Equal(t, want, a)

			addr, size, err := ex.Address("fib")
			require.NoError(t, err)
			assert.NotZero(t, size)
			so, err := ex.Symbol(addr + 4)
			require.NoError(t, err)
			assert.Equal(t, SymbolOffset{"fib", 4}, so)
			so, err = ex.Symbol(addr)
			require.NoError(t, err)
			assert.Equal(t, SymbolOffset{"fib", 0}, so)
			_, err = ex.Symbol(8)
			assert.ErrorIs(t, err, ErrNoSymbol)
			_, _, err = ex.Address("no_such_function")
			assert.ErrorIs(t, err, ErrNoSymbol)

			// File offset through PT_LOAD, as the kernel computes it.
			off, err := ex.FileOffset(addr)
			require.NoError(t, err)
			f, err := elf.Open(ex.Path())
			require.NoError(t, err)
			defer f.Close()
			for _, p := range f.Progs {
				if p.Type == elf.PT_LOAD && p.Vaddr <= addr && addr < p.Vaddr+p.Filesz {
					assert.Equal(t, addr-p.Vaddr+p.Off, off)
				}
			}
			back, err := ex.VAddr(off)
			require.NoError(t, err)
			assert.Equal(t, addr, back)

			c := Consumer{Handler: func(*Ctx) int { return 0 }}
			p, err := ex.Uprobe("fib", c, nil)
			require.NoError(t, err)
			info := p.Info()
			assert.Equal(t, off, info.Offset)
			assert.Equal(t, "fib", info.Name)
			assert.Equal(t, "fib+0x0", info.Symbol)
			assert.False(t, sys.tree.empty())
			require.NoError(t, p.Close())
			assert.True(t, sys.tree.empty())

			_, err = ex.Uprobe("no_such_function", c, nil)
			assert.ErrorIs(t, err, ErrNoSymbol)
			_, err = ex.Uprobe("fib", Consumer{}, nil)
			assert.ErrorIs(t, err, ErrInvalid)
			_, err = ex.Uretprobe("fib", c, nil)
			assert.ErrorIs(t, err, ErrInvalid, "a uretprobe needs RetHandler")
			_, err = ex.Uprobe("fib", c, &UprobeOptions{Offset: size})
			assert.ErrorIs(t, err, ErrInvalid, "offset past the symbol")
			// Inside the first instruction (x86 push %r15 is 2 bytes).
			_, err = ex.Uprobe("fib", c, &UprobeOptions{Offset: 1})
			assert.ErrorIs(t, err, ErrNotInstructionBoundary)
			_, err = ex.Uprobe("fib", c, &UprobeOptions{Offset: 2 + 2*boolInt(a == ArchARM64)})
			if a == ArchARM64 {
				assert.NoError(t, err, "fib+4 is an instruction")
			} else {
				assert.NoError(t, err, "fib+2 is an instruction")
			}
			// Address bypasses the symbol lookup.
			p2, err := ex.Uretprobe("", Consumer{RetHandler: func(*Ctx) {}}, &UprobeOptions{Address: off})
			require.NoError(t, err)
			assert.Equal(t, off, p2.Info().Offset)
			assert.Equal(t, "fib+0x0", p2.Info().Symbol, "the function covering a raw file offset")
			assert.True(t, p2.Info().Return)
			require.NoError(t, p2.Close())
		})
	}
}

func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestExecutable_Rejected finds an instruction the kernel refuses in a
// real binary (arm64: LDR literal; x86-64: a HLT after a call
// — SYSCALL is accepted, as by the kernel) and
// probes it.
func TestExecutable_Rejected(t *testing.T) {
	for _, arch := range []string{"arm64", "amd64"} {
		t.Run(arch, func(t *testing.T) {
			ex, err := New(DefaultOptions()).OpenExecutable(fibPath(t, arch))
			require.NoError(t, err)
			f, err := elf.Open(ex.Path())
			require.NoError(t, err)
			text := f.Section(".text")
			data, err := text.Data()
			require.NoError(t, err)
			f.Close()
			var vaddr uint64
			if arch == "arm64" {
				for i := 0; i+4 <= len(data); i += 4 {
					if w := binary.LittleEndian.Uint32(data[i:]); a64LDRLit.is(w) || a64Excl.is(w) {
						vaddr = text.Addr + uint64(i)
						break
					}
				}
			} else {
				i := bytes.Index(data, []byte{0xf4}) // hlt, after a call rel32 (_exit, __libc_start_main)
				for i >= 0 && (i < 5 || data[i-5] != 0xe8) {
					j := bytes.Index(data[i+1:], []byte{0xf4})
					if j < 0 {
						i = -1
						break
					}
					i += 1 + j
				}
				require.GreaterOrEqual(t, i, 0)
				vaddr = text.Addr + uint64(i)
			}
			require.NotZero(t, vaddr)
			off, err := ex.FileOffset(vaddr)
			require.NoError(t, err)
			_, err = ex.Uprobe("", Consumer{Handler: func(*Ctx) int { return 0 }}, &UprobeOptions{Address: off})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrRejected)
			var re *RejectError
			require.True(t, errors.As(err, &re))
			if arch == "arm64" {
				assert.Equal(t, EINVAL, re.Errno)
				assert.True(t, strings.Contains(re.Reason, "literal") || strings.Contains(re.Reason, "exclusive"), re.Reason)
			} else {
				assert.Equal(t, ENOTSUPP, re.Errno)
				assert.Contains(t, strings.ToLower(re.Disasm), "hlt")
			}
			t.Log(err)
		})
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		err  bool
	}{
		{in: "fib", want: Spec{Symbol: "fib"}},
		{in: "fib+8", want: Spec{Symbol: "fib", Offset: 8}},
		{in: "fib+0x10", want: Spec{Symbol: "fib", Offset: 16}},
		{in: "main.(*T).M", want: Spec{Symbol: "main.(*T).M"}},
		{in: "0x401660", want: Spec{VAddr: 0x401660, HasVAddr: true}},
		{in: "/lib/libc.so.6:malloc", want: Spec{Path: "/lib/libc.so.6", Symbol: "malloc"}},
		{in: "/lib/libc.so.6:malloc+4", want: Spec{Path: "/lib/libc.so.6", Symbol: "malloc", Offset: 4}},
		{in: "/bin/prog:0x1660", want: Spec{Path: "/bin/prog", FileOffset: 0x1660, HasFileOffset: true}},
		{in: "c:/weird:path:0x10", want: Spec{Path: "c:/weird:path", FileOffset: 0x10, HasFileOffset: true}},
		{in: "", err: true},
		{in: "fib+", err: true},
		{in: "fib+zz", err: true},
		{in: ":fib", err: true},
		{in: "/bin/prog:", err: true},
		{in: "+4", err: true},
		{in: "0xZZ", err: true},
		{in: "123", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSpec(tc.in)
			if tc.err {
				assert.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			tc.want.Text = tc.in
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestAttachSpec(t *testing.T) {
	path := fibPath(t, "amd64")
	sys := New(DefaultOptions())
	ex, err := sys.OpenExecutable(path)
	require.NoError(t, err)
	addr, _, err := ex.Address("fib")
	require.NoError(t, err)
	off, _ := ex.FileOffset(addr)
	rec := NewRecorder(nil)
	for _, text := range []string{"fib", "fib+2", "0x401660", path + ":0x1660"} {
		sp, err := ParseSpec(text)
		require.NoError(t, err)
		p, err := sys.AttachSpec(sp, path, false, rec.Consumer(text, false), nil)
		require.NoError(t, err, text)
		want := off
		if text == "fib+2" {
			want += 2
		}
		if text == path+":0x1660" {
			want = 0x1660
		}
		assert.Equal(t, want, p.Info().Offset, text)
		assert.Equal(t, text, p.Info().Name)
		require.NoError(t, p.Close())
	}
	var sb strings.Builder
	require.NoError(t, rec.WriteSummary(&sb))
	assert.Contains(t, sb.String(), "fib+2")
}

func TestOptions_Set(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.Set("TreeLock", "percpu-rwsem"))
	require.NoError(t, o.Set("xolflushelision", "false"))
	assert.Equal(t, TreeLockPercpuRWSem, o.TreeLock)
	assert.False(t, o.XOLFlushElision)
	assert.ErrorIs(t, o.Set("nope", "1"), ErrInvalid)
	assert.ErrorIs(t, o.Set("TreeLock", "mutex"), ErrInvalid)
	assert.Contains(t, o.String(), "TreeLock=percpu-rwsem")
	d := DefaultOptions()
	assert.True(t, d.XOLFlushElision && d.ARM64SimulateNOP && d.ReturnInstancePool && d.X86UretprobeSyscall)
	assert.False(t, d.SingleStepSiglock)
	assert.Equal(t, TreeLockRCU, d.TreeLock)
}
