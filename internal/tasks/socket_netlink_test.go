package tasks

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNetlinkHostileRequests: a truncated or oversized header ends the
// batch without a reply, a guest that never reads cannot grow the queue
// past the receive buffer (ENOBUFS instead), and the port id follows
// netlink_autobind.
func TestNetlinkHostileRequests(t *testing.T) {
	bothArches(t, func(t *testing.T, a *arch) {
		task := testTaskArch(t, a)
		fd := callSyscall(t, task, "socket", afNETLINK, sockRAW, netlinkROUTE)
		require.Less(t, int64(fd), int64(1024))
		s, _, e := task.fileSock(int32(fd))
		require.Zero(t, e)

		req := make([]byte, 20)
		le := binary.LittleEndian
		put := func(l uint32, typ, flags uint16) {
			le.PutUint32(req, l)
			le.PutUint16(req[4:], typ)
			le.PutUint16(req[6:], flags)
		}
		require.NoError(t, task.tg.mm.WriteAt(make([]byte, 64), scratch))
		for _, l := range []uint32{0, 8, 15, 21, 1 << 31} { // shorter than a header, longer than sent
			put(l, rtmGETLINK, nlmFREQUEST|nlmFDUMP)
			require.NoError(t, task.tg.mm.WriteAt(req, scratch))
			require.Equal(t, uint64(len(req)), callSyscall(t, task, "sendto", fd, scratch, uint64(len(req)), 0, 0, 0))
		}
		require.Empty(t, s.rq, "no reply to a malformed request")
		require.Equal(t, uint32(task.tg.pid), s.local.nlPid, "autobind: the tgid")

		put(20, rtmGETLINK, nlmFREQUEST|nlmFDUMP)
		require.NoError(t, task.tg.mm.WriteAt(req, scratch))
		for i := 0; i < 5000; i++ {
			callSyscall(t, task, "sendto", fd, scratch, 20, 0, 0, 0)
		}
		require.LessOrEqual(t, s.rqBytes, netlinkRcvBuf)
		require.Equal(t, ENOBUFS, s.soErr, "the overrun is reported")

		// A second socket cannot have the same port id.
		fd2 := callSyscall(t, task, "socket", afNETLINK, sockDGRAM, netlinkROUTE)
		sa := make([]byte, 12)
		le.PutUint16(sa, afNETLINK)
		le.PutUint32(sa[4:], uint32(task.tg.pid))
		require.NoError(t, task.tg.mm.WriteAt(sa, scratch+256))
		require.Equal(t, errRet(EADDRINUSE), callSyscall(t, task, "bind", fd2, scratch+256, 12))
		require.Equal(t, errRet(EPROTONOSUPPORT), callSyscall(t, task, "socket", afNETLINK, sockRAW, 31))
		require.Equal(t, errRet(EOPNOTSUPP), callSyscall(t, task, "listen", fd2, 1))
	})
}
