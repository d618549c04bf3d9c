package tasks

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSocketFamiliesFailLoudly(t *testing.T) {
	task := testTask(t)
	_, e := task.newSocket(17, sockRAW, 0)
	require.Equal(t, EAFNOSUPPORT, e)
	require.Equal(t, 1, task.tg.k.unimpl["socket family AF_PACKET"])
	_, e = task.newSocket(afNETLINK, sockRAW, 16) // NETLINK_GENERIC: only NETLINK_ROUTE is there
	require.Equal(t, EPROTONOSUPPORT, e)
	require.Equal(t, 1, task.tg.k.unimpl["socket AF_NETLINK protocol 16"])
	_, e = task.newSocket(afINET, sockRAW, 1)
	require.Equal(t, EPERM, e, "a raw socket needs CAP_NET_RAW (socket_rawip_test.go)")
	s, e := task.newSocket(afUNIX, sockRAW, 0)
	require.Zero(t, e)
	require.Equal(t, sockDGRAM, s.typ, "AF_UNIX SOCK_RAW is a datagram socket")
	for _, fam := range []int{afINET, afINET6} {
		_, e = task.newSocket(fam, sockSTREAM|sockNONBLOCK, ipprotoMPTCP)
		require.Equal(t, EPROTONOSUPPORT, e, "no Multipath TCP in-kernel (a kernel without CONFIG_MPTCP)")
	}
	require.Equal(t, 1, task.tg.k.unimpl["socket AF_INET IPPROTO_MPTCP (no Multipath TCP in the in-kernel stack: EPROTONOSUPPORT)"])
	require.Equal(t, 1, task.tg.k.unimpl["socket AF_INET6 IPPROTO_MPTCP (no Multipath TCP in the in-kernel stack: EPROTONOSUPPORT)"])
	_, e = task.newSocket(afINET, sockSEQPACKET, 0)
	require.Equal(t, EPROTONOSUPPORT, e)
	require.Equal(t, EOPNOTSUPP, s.levelOK(ipprotoTCP))
	tcp, _ := task.newSocket(afINET, sockSTREAM, 0)
	require.Equal(t, ENOPROTOOPT, tcp.levelOK(ipprotoIPV6))
	require.Zero(t, tcp.levelOK(ipprotoTCP))
}

func sin(ip [16]byte, port uint16) []byte {
	return sockAddr{family: afINET, ip: ip, port: port}.encode()
}

func TestEphemeralPortsAndBindConflicts(t *testing.T) {
	task := testTask(t)
	var ports []uint16
	for range 2 {
		s, _ := task.newSocket(afINET, sockSTREAM, 0)
		require.Zero(t, s.inetBind(task, sin(ip4Loopback, 0)))
		ports = append(ports, s.local.port)
	}
	require.Equal(t, []uint16{32768, 32769}, ports, "ephemeral ports count up (deterministic)")
	s, _ := task.newSocket(afINET, sockSTREAM, 0)
	require.Equal(t, EADDRINUSE, s.inetBind(task, sin(ip4Any, 32768)))
	require.Zero(t, s.inetBind(task, sin(v4(127, 0, 0, 2), 40000)))
	require.Equal(t, EINVAL, s.inetBind(task, sin(ip4Any, 40001)), "already bound")
	s6, _ := task.newSocket(afINET6, sockSTREAM, 0)
	any6 := sockAddr{family: afINET6, port: 32769}.encode()
	require.Equal(t, EADDRINUSE, s6.inetBind(task, any6), "[::] covers IPv4 unless V6ONLY")
	s6.opts[sockOpt{ipprotoIPV6, ipv6V6ONLY}] = 1
	require.Zero(t, s6.inetBind(task, any6))
	far, _ := task.newSocket(afINET, sockDGRAM, 0)
	require.Equal(t, EADDRNOTAVAIL, far.inetBind(task, sin(v4(10, 1, 2, 3), 0)))
	u, _ := task.newSocket(afINET, sockDGRAM, 0)
	require.Zero(t, u.inetBind(task, sin(ip4Any, 0)))
	require.Equal(t, uint16(32768), u.local.port, "UDP has its own port space")
	b := u.local.encode()
	require.Len(t, b, 16)
	require.Equal(t, uint16(afINET), binary.LittleEndian.Uint16(b))
	require.Equal(t, uint16(32768), binary.BigEndian.Uint16(b[2:]))
}

func TestSocketPairStream(t *testing.T) {
	task := testTask(t)
	s1, _ := task.newSocket(afUNIX, sockSTREAM, 0)
	s2 := s1.pair()
	f1 := &openFile{ops: s1, flags: oRDWR | oNONBLOCK}
	f2 := &openFile{ops: s2, flags: oRDWR | oNONBLOCK}
	require.Equal(t, uint16(pollOUT), s2.poll(pollIN|pollOUT))
	_, e := s2.read(task, f2, 10, -1)
	require.Equal(t, EAGAIN, e)
	n, e := s1.write(task, f1, []byte("hello"), -1)
	require.Zero(t, e)
	require.Equal(t, uint64(5), n)
	require.Equal(t, uint16(pollIN|pollOUT), s2.poll(pollIN|pollOUT))
	r, e := s2.recv(task, f2, 3, msgPEEK)
	require.Zero(t, e)
	require.Equal(t, "hel", string(r.data))
	b, _ := s2.read(task, f2, 10, -1)
	require.Equal(t, "hello", string(b))
	s1.release()
	require.Equal(t, uint16(pollIN|pollOUT|pollRDHUP|pollHUP), s2.poll(0xffff))
	b, e = s2.read(task, f2, 10, -1)
	require.Zero(t, e)
	require.Empty(t, b, "EOF")
	_, e = s2.send(task, f2, []byte("x"), nil, nil, nil, msgNOSIGNAL)
	require.Equal(t, EPIPE, e)
	st, _ := s2.stat(task, f2)
	require.Equal(t, uint32(sIFSOCK|0o777), st.mode)
}

func TestEpollEdgeTriggered(t *testing.T) {
	task := testTask(t)
	p := newPipe()
	r := &openFile{ops: &pipeEnd{p: p}, flags: oRDONLY | oNONBLOCK}
	w := &openFile{ops: &pipeEnd{p: p, isWrite: true}, flags: oWRONLY | oNONBLOCK}
	it := &epollItem{f: r, w: r.ops.(pollWaker), mask: epollIN | epollET}
	rev, _ := it.readyEvents()
	require.Zero(t, rev)
	w.ops.write(task, w, []byte("a"), -1)
	rev, ch := it.readyEvents()
	require.Equal(t, uint32(epollIN), rev)
	it.seen = ch
	rev, _ = it.readyEvents()
	require.Zero(t, rev, "no new event since the last report")
	w.ops.write(task, w, []byte("b"), -1)
	rev, _ = it.readyEvents()
	require.Equal(t, uint32(epollIN), rev, "new data: a new edge")
	lt := &epollItem{f: r, w: r.ops.(pollWaker), mask: epollIN | epollRDNORM}
	rev, _ = lt.readyEvents()
	require.Equal(t, uint32(epollIN|epollRDNORM), rev)
	lt.disabled = true
	rev, _ = lt.readyEvents()
	require.Zero(t, rev, "EPOLLONESHOT fired")
	_, isWaker := any(&hostFile{}).(pollWaker)
	require.False(t, isWaker, "regular files cannot be watched (EPERM)")
}
