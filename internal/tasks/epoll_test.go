package tasks

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uvm-emu/uvm/internal/vm"
)

// TestEpollCtlWakesWaiter: a parallel-mode epoll_wait sleeps on the
// channels its last scan returned; EPOLL_CTL_ADD and EPOLL_CTL_MOD by
// another thread must close one of them, or a waiter whose set gains a
// ready item (Go's netpoller adding a connected socket) sleeps on until
// its timeout or an unrelated event (the httptest hang).
func TestEpollCtlWakesWaiter(t *testing.T) {
	task := testTask(t)
	const scratch = 0x10000
	require.NoError(t, task.tg.mm.Map(vm.VMA{Start: scratch, End: scratch + vm.PageSize, Prot: vm.ProtRead | vm.ProtWrite}))
	ctl := func(epfd int32, op uint64, fd int32, mask uint32) {
		t.Helper()
		ev := binary.LittleEndian.AppendUint32(nil, mask)
		ev = binary.LittleEndian.AppendUint64(ev, uint64(fd))
		require.NoError(t, task.tg.mm.WriteAt(ev, scratch))
		require.Zero(t, task.sysEpollCtl(epfd, op, fd, scratch))
	}
	anyClosed := func(chans []<-chan struct{}) bool {
		for _, c := range chans {
			select {
			case <-c:
				return true
			default:
			}
		}
		return false
	}
	epfd := int32(task.sysEpollCreate1(0))
	ef, _ := task.tg.fds.get(epfd)
	ep := ef.ops.(*epollFile).ep
	idle := int32(task.sysEventfd2(0, 0))
	ready := int32(task.sysEventfd2(1, 0))

	_, n, waits := task.epollScan(ep, 1, false)
	require.Zero(t, n)
	require.NotEmpty(t, waits, "an empty set must still have something to sleep on")
	ctl(epfd, epollCtlAdd, idle, epollIN)
	require.True(t, anyClosed(waits), "EPOLL_CTL_ADD to an empty set wakes the waiter")

	_, n, waits = task.epollScan(ep, 1, false)
	require.Zero(t, n, "the idle eventfd is not readable")
	ctl(epfd, epollCtlAdd, ready, epollIN|epollET)
	require.True(t, anyClosed(waits), "EPOLL_CTL_ADD of a ready item wakes the waiter")
	_, n, _ = task.epollScan(ep, 4, true)
	require.Equal(t, int32(1), n)

	_, n, waits = task.epollScan(ep, 4, false)
	require.Zero(t, n, "the edge was reported")
	ctl(epfd, epollCtlMod, idle, epollOUT)
	require.True(t, anyClosed(waits), "EPOLL_CTL_MOD wakes the waiter")
	_, n, _ = task.epollScan(ep, 4, false)
	require.Equal(t, int32(1), n, "an eventfd is writable")
}
