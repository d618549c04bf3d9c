package tasks

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatSockaddr(t *testing.T) {
	in4 := sockAddr{family: afINET, ip: v4(127, 0, 0, 1), port: 8080}.encode()
	require.Equal(t, `{sa_family=AF_INET, sin_port=htons(8080), sin_addr=inet_addr("127.0.0.1")}`, formatSockaddr(in4))
	in6 := sockAddr{family: afINET6, ip: ip6Loopback, port: 443}.encode()
	require.Equal(t, `{sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}`, formatSockaddr(in6))
	require.Equal(t, `{sa_family=AF_UNIX, sun_path="/tmp/s"}`, formatSockaddr([]byte("\x01\x00/tmp/s\x00junk")))
	require.Equal(t, `{sa_family=AF_UNIX, sun_path=@"abs"}`, formatSockaddr([]byte("\x01\x00\x00abs")))
	require.Equal(t, `{sa_family=AF_UNIX}`, formatSockaddr([]byte("\x01\x00")))
	nl := []byte{16, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0}
	require.Equal(t, `{sa_family=AF_NETLINK, nl_pid=7, nl_groups=00000001}`, formatSockaddr(nl), "strace's format")
	require.Equal(t, `{sa_family=AF_INET}`, formatSockaddr(in4[:4]), "short: the family only")
}
