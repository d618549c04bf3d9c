package vm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSyncCodeShootsDownWriters: a writer CPU caches a write entry for a
// page before it first holds code; another CPU then fetches from it
// (CodePage + SyncCode). The fetching CPU must not go on until the
// writer has dropped that entry, or the writer's next store (after the
// threads' handover) would bypass CodeVersion and the executing CPU
// would keep running the old code (cross-modifying code; jit_mt).
func TestSyncCodeShootsDownWriters(t *testing.T) {
	mm := NewMM()
	require.NoError(t, mm.Map(VMA{Start: 0x10000, End: 0x11000, Prot: ProtRead | ProtWrite | ProtExec}))
	writer, fetcher := NewTLB(mm), NewTLB(mm)
	kicked := make(chan struct{}, 1)
	writer.SetInterrupt(func() {
		select {
		case kicked <- struct{}{}:
		default:
		}
	})
	writer.Enter() // the writer executes guest code meanwhile
	require.True(t, writer.Store32(0x10000, 0xd65f03c0))
	p, f := mm.CodePage(0x10000)
	require.Nil(t, f)
	ver := p.CodeVersion.Load()

	done := make(chan struct{})
	go func() {
		fetcher.Enter()
		fetcher.SyncCode()
		fetcher.Leave()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("SyncCode returned while the writer still held its write entry")
	case <-kicked:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer was never interrupted")
	}
	// The writer's CPU leaves Run at the interrupt and re-enters.
	writer.Leave()
	<-done
	writer.Enter()
	require.True(t, writer.Store32(0x10000, 0x52800040))
	require.NotEqual(t, ver, p.CodeVersion.Load(), "a store to a code page did not bump its CodeVersion")
	writer.Leave()

	// Once shot down, later fetches of the same generation wait for no one.
	writer.Enter()
	fetcher.SyncCode()
	writer.Leave()
}
