// Command netifs lists the network interfaces and addresses the way Go
// programs and libcs find them (rtnetlink dumps through
// syscall.NetlinkRIB, net.Interfaces, net.InterfaceAddrs) and checks
// rtnetlink's answers to requests it cannot serve. Its expected output is
// Linux's in a new network namespace with lo up (`unshare -rn sh -c 'ip
// link set lo up && netifs'`): one interface, lo, with 127.0.0.1/8 and
// ::1/128.
package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"syscall"
)

func dump(what string, typ, fam int) {
	b, err := syscall.NetlinkRIB(typ, fam)
	if err != nil {
		fmt.Println(what, "error:", err)
		return
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		fmt.Println(what, "parse error:", err)
		return
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case syscall.NLMSG_DONE:
			fmt.Println(what, "done")
		case syscall.RTM_NEWLINK:
			ifi := (*syscall.IfInfomsg)(nil)
			_ = ifi
			d := m.Data
			fmt.Printf("%s link type %d index %d flags %#x\n", what, binary.LittleEndian.Uint16(d[2:]),
				int32(binary.LittleEndian.Uint32(d[4:])), binary.LittleEndian.Uint32(d[8:]))
			attrs, _ := syscall.ParseNetlinkRouteAttr(&m)
			for _, a := range attrs {
				switch a.Attr.Type {
				case syscall.IFLA_IFNAME, syscall.IFLA_QDISC:
					fmt.Printf("  attr %d %q\n", a.Attr.Type, a.Value)
				case syscall.IFLA_MTU, syscall.IFLA_TXQLEN:
					fmt.Printf("  attr %d %d\n", a.Attr.Type, binary.LittleEndian.Uint32(a.Value))
				case syscall.IFLA_ADDRESS, syscall.IFLA_BROADCAST:
					fmt.Printf("  attr %d %x\n", a.Attr.Type, a.Value)
				}
			}
		case syscall.RTM_NEWADDR:
			d := m.Data
			fmt.Printf("%s addr family %d prefix %d flags %#x scope %d index %d\n", what, d[0], d[1], d[2], d[3],
				binary.LittleEndian.Uint32(d[4:]))
			attrs, _ := syscall.ParseNetlinkRouteAttr(&m)
			for _, a := range attrs {
				switch a.Attr.Type {
				case syscall.IFA_ADDRESS, syscall.IFA_LOCAL:
					fmt.Printf("  attr %d %v\n", a.Attr.Type, net.IP(a.Value))
				case syscall.IFA_LABEL:
					fmt.Printf("  attr %d %q\n", a.Attr.Type, a.Value)
				}
			}
		default:
			fmt.Println(what, "message type", m.Header.Type)
		}
	}
}

// request sends one rtnetlink message on a fresh socket and prints what
// comes back (message types and NLMSG_ERROR codes).
func request(what string, typ, flags uint16, body []byte) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		fmt.Println(what, "socket:", err)
		return
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		fmt.Println(what, "bind:", err)
		return
	}
	sa, _ := syscall.Getsockname(fd)
	if nl, ok := sa.(*syscall.SockaddrNetlink); ok {
		fmt.Println(what, "port id is the pid:", nl.Pid == uint32(os.Getpid()))
	}
	msg := make([]byte, 16, 16+len(body))
	binary.LittleEndian.PutUint32(msg, uint32(16+len(body)))
	binary.LittleEndian.PutUint16(msg[4:], typ)
	binary.LittleEndian.PutUint16(msg[6:], flags)
	binary.LittleEndian.PutUint32(msg[8:], 7)
	msg = append(msg, body...)
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		fmt.Println(what, "sendto:", err)
		return
	}
	buf := make([]byte, 65536)
	n, from, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		fmt.Println(what, "recvfrom:", err)
		return
	}
	if nl, ok := from.(*syscall.SockaddrNetlink); ok {
		fmt.Println(what, "from the kernel:", nl.Pid == 0)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		fmt.Println(what, "parse:", err)
		return
	}
	for _, m := range msgs {
		if m.Header.Type == syscall.NLMSG_ERROR {
			fmt.Println(what, "error", int32(binary.LittleEndian.Uint32(m.Data)), "seq", m.Header.Seq)
		} else {
			fmt.Println(what, "message", m.Header.Type, "seq", m.Header.Seq)
		}
	}
}

func main() {
	dump("links", syscall.RTM_GETLINK, syscall.AF_UNSPEC)
	dump("addrs", syscall.RTM_GETADDR, syscall.AF_UNSPEC)
	dump("addrs4", syscall.RTM_GETADDR, syscall.AF_INET)
	dump("addrs6", syscall.RTM_GETADDR, syscall.AF_INET6)
	ifs, err := net.Interfaces()
	fmt.Println("net.Interfaces:", ifs, err)
	addrs, err := net.InterfaceAddrs()
	fmt.Println("net.InterfaceAddrs:", addrs, err)
	lo, err := net.InterfaceByName("lo")
	fmt.Println("InterfaceByName:", lo, err)

	ifinfo := func(index int32) []byte {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint32(b[4:], uint32(index))
		return b
	}
	request("getlink 1", syscall.RTM_GETLINK, syscall.NLM_F_REQUEST|syscall.NLM_F_ACK, ifinfo(1))
	request("getlink 99", syscall.RTM_GETLINK, syscall.NLM_F_REQUEST, ifinfo(99))
	request("type 1000", 1000, syscall.NLM_F_REQUEST, ifinfo(0))
	if _, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW, 31); err != nil {
		fmt.Println("netlink protocol 31:", err)
	}
	if _, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_STREAM, syscall.NETLINK_ROUTE); err != nil {
		fmt.Println("netlink SOCK_STREAM:", err)
	}
}
