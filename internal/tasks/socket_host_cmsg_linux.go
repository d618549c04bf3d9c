package tasks

import (
	"encoding/binary"
	"fmt"
)

// Control messages on --net=host sockets. The guests are LP64 little-
// endian like the host, so struct cmsghdr (a 64-bit length, level, type,
// 8-byte alignment) and the payloads passed through (in_pktinfo,
// in6_pktinfo, ints, timeval/timespec) have the host's layout; what
// crosses is checked, never trusted:
//   - sendmsg: the guest's buffer (at most 64 KiB, else ENOBUFS as
//     Linux's optmem limit) is walked header by header; a header shorter
//     than 16 bytes or running past the buffer is EINVAL (CMSG_OK).
//     SCM_RIGHTS and SCM_CREDENTIALS are dropped: Linux ignores them on
//     an INET socket (__sock_cmsg_send: "semantically in SOL_UNIX"), and
//     their descriptors and pids are the guest's, never handed to the
//     host. The messages of hostSendCmsg go to the host kernel as they
//     are; any other fails loudly with EINVAL.
//   - recvmsg: the host gets at most the guest's msg_controllen (so
//     MSG_CTRUNC is the host's), and of what it returns only the
//     messages of hostRecvCmsg, framed as they came, are copied out;
//     anything else is dropped loudly.
//
// The options that ask for the received ones (IP_PKTINFO, IP_RECVTOS,
// IP_RECVTTL, IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT, IPV6_RECVTCLASS,
// SO_TIMESTAMP, SO_TIMESTAMPNS and their _NEW forms) are passed through
// to the host socket with the others of hostSockOpts.

// hostCtlMax bounds a control buffer on a host socket.
const hostCtlMax = 1 << 16

// Levels and types (asm-generic numbers, the same on both arches).
const (
	cmsgIPTOS        = 1  // IP_TOS
	cmsgIPTTL        = 2  // IP_TTL
	cmsgIPPKTINFO    = 8  // IP_PKTINFO
	cmsgIPRECVTTL    = 12 // IP_RECVTTL (option)
	cmsgIPRECVTOS    = 13 // IP_RECVTOS (option)
	cmsgIPV6RECVPKT  = 49 // IPV6_RECVPKTINFO (option)
	cmsgIPV6PKTINFO  = 50 // IPV6_PKTINFO
	cmsgIPV6RECVHOP  = 51 // IPV6_RECVHOPLIMIT (option)
	cmsgIPV6HOPLIMIT = 52 // IPV6_HOPLIMIT
	cmsgIPV6DONTFRAG = 62 // IPV6_DONTFRAG
	cmsgIPV6RECVTCL  = 66 // IPV6_RECVTCLASS (option)
	cmsgIPV6TCLASS   = 67 // IPV6_TCLASS
	scmTIMESTAMP     = 29 // SO_TIMESTAMP / SCM_TIMESTAMP
	scmTIMESTAMPNS   = 35 // SO_TIMESTAMPNS / SCM_TIMESTAMPNS
	scmTIMESTAMPNEW  = 63 // SO_TIMESTAMP_NEW
	scmTIMESTAMPNSN  = 64 // SO_TIMESTAMPNS_NEW
)

type cmsgKind struct{ level, typ int32 }

// hostSendCmsg: what a guest may send on a host socket.
var hostSendCmsg = map[cmsgKind]bool{
	{ipprotoIP, cmsgIPPKTINFO}: true, {ipprotoIP, cmsgIPTOS}: true, {ipprotoIP, cmsgIPTTL}: true,
	{ipprotoIPV6, cmsgIPV6PKTINFO}: true, {ipprotoIPV6, cmsgIPV6HOPLIMIT}: true,
	{ipprotoIPV6, cmsgIPV6TCLASS}: true, {ipprotoIPV6, cmsgIPV6DONTFRAG}: true,
}

// hostRecvCmsg: what a receive on a host socket hands back.
var hostRecvCmsg = map[cmsgKind]bool{
	{ipprotoIP, cmsgIPPKTINFO}: true, {ipprotoIP, cmsgIPTOS}: true, {ipprotoIP, cmsgIPTTL}: true,
	{ipprotoIPV6, cmsgIPV6PKTINFO}: true, {ipprotoIPV6, cmsgIPV6HOPLIMIT}: true, {ipprotoIPV6, cmsgIPV6TCLASS}: true,
	{solSOCKETcmsg, scmTIMESTAMP}: true, {solSOCKETcmsg, scmTIMESTAMPNS}: true,
	{solSOCKETcmsg, scmTIMESTAMPNEW}: true, {solSOCKETcmsg, scmTIMESTAMPNSN}: true,
}

// cmsgWalk calls fn for each framed message of b (at most len(b) bytes
// of headers and payloads); false: a header that is not CMSG_OK.
func cmsgWalk(b []byte, fn func(level, typ int32, msg []byte) bool) bool {
	le := binary.LittleEndian
	for off := uint64(0); off+16 <= uint64(len(b)); {
		l := le.Uint64(b[off:])
		if l < 16 || l > uint64(len(b))-off {
			return false
		}
		if !fn(int32(le.Uint32(b[off+8:])), int32(le.Uint32(b[off+12:])), b[off:off+l]) {
			return true
		}
		off += (l + 7) &^ 7
	}
	return true
}

// hostSendCmsgs reads and checks a sendmsg's control buffer for a host
// socket and returns what goes to the host (nil: nothing).
func (t *Task) hostSendCmsgs(h *hostSock, addr, n uint64) ([]byte, Errno) {
	if n > hostCtlMax {
		return nil, ENOBUFS
	}
	b, e := t.readBuf(addr, n) // copied in whole, as Linux does (EFAULT)
	if e != 0 {
		return nil, e
	}
	if n < 16 {
		return nil, 0 // no header fits: Linux sees no message
	}
	var bad Errno
	var out []byte
	ok := cmsgWalk(b, func(level, typ int32, msg []byte) bool {
		switch {
		case level == solSOCKETcmsg && (typ == scmRIGHTS || typ == scmCREDS):
			return true // ignored on INET, as Linux's __sock_cmsg_send does
		case hostSendCmsg[cmsgKind{level, typ}]:
			out = append(out, msg...)
			for len(out)%8 != 0 {
				out = append(out, 0)
			}
			return true
		}
		t.sockUnimpl(fmt.Sprintf("control message level %d type %d on a --net=host %s socket", level, typ, famName2(h.family)))
		bad = EINVAL
		return false
	})
	if !ok {
		return nil, EINVAL
	}
	if bad != 0 {
		return nil, bad
	}
	return out, 0
}

// hostRecvCmsgs keeps the messages of hostRecvCmsg from what the host
// returned, with their framing.
func (t *Task) hostRecvCmsgs(b []byte) []byte {
	var out []byte
	ok := cmsgWalk(b, func(level, typ int32, msg []byte) bool {
		if !hostRecvCmsg[cmsgKind{level, typ}] {
			t.sockUnimpl(fmt.Sprintf("received control message level %d type %d from a --net=host socket (dropped)", level, typ))
			return true
		}
		out = append(out, msg...)
		if pad := (8 - len(out)%8) % 8; pad > 0 && len(out)+pad <= len(b) {
			out = append(out, make([]byte, pad)...)
		}
		return true
	})
	if !ok {
		t.sockUnimpl("malformed control messages from a --net=host socket (dropped)")
		return nil
	}
	return out
}
