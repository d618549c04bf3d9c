package tasks

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmsg builds one control message header and payload, padded to 8.
func cmsg(l uint64, level, typ int32, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, l)
	b = binary.LittleEndian.AppendUint32(b, uint32(level))
	b = binary.LittleEndian.AppendUint32(b, uint32(typ))
	b = append(b, data...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestCmsgLengthWrap: a cmsg_len near 2^64 is EINVAL (CMSG_OK), not a
// wrapped bounds check that slices past the buffer.
func TestCmsgLengthWrap(t *testing.T) {
	task := testTaskArch(t, &amd64ABI)
	s, _ := task.newSocket(afUNIX, sockDGRAM, 0)
	for _, l := range []uint64{1<<64 - 8, 1<<64 - 16, 15, 33} {
		// after a good first message: off+l wraps past 2^64
		// (SCM_RIGHTS with no descriptor)
		b := append(cmsg(16, solSOCKETcmsg, scmRIGHTS, nil), cmsg(l, solSOCKETcmsg, scmRIGHTS, []byte{0, 0, 0, 0})...)
		require.Zero(t, task.writeBytes(scratch, b))
		_, _, e := task.parseCmsgs(s, scratch, uint64(len(b)))
		require.Equal(t, EINVAL, e, "cmsg_len %#x", l)
		require.False(t, cmsgWalk(b, func(int32, int32, []byte) bool { return true }), "cmsg_len %#x", l)
	}
	one := cmsg(20, solSOCKETcmsg, scmRIGHTS, []byte{0, 0, 0, 0})
	var got []int32
	require.True(t, cmsgWalk(append(one, cmsg(20, ipprotoIP, cmsgIPTTL, []byte{64, 0, 0, 0})...), func(level, typ int32, m []byte) bool {
		require.Len(t, m, 20)
		got = append(got, level, typ)
		return true
	}))
	require.Equal(t, []int32{solSOCKETcmsg, scmRIGHTS, ipprotoIP, cmsgIPTTL}, got)
}
