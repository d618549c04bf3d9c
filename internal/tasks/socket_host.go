package tasks

import "errors"

// The host network (Options.Net == "host", uvm's --net=host): AF_INET and
// AF_INET6 sockets are host sockets (socket_host_linux.go), so a guest
// reaches real servers and serves real clients; AF_UNIX stays in the
// emulated kernel. Only parallel mode: the host network's timing and
// contents are outside the deterministic run. Elsewhere than on a Linux
// host it is refused (socket_host_other.go).

// Network modes (Options.Net).
const (
	NetLoopback = "loopback" // the in-kernel network (the default)
	NetHost     = "host"     // AF_INET/AF_INET6 on the host's network
)

// netOptErr checks Options.Net (Start fails with it).
func (k *Kernel) netOptErr() error {
	switch k.opts.Net {
	case "", NetLoopback:
		return nil
	case NetHost:
		if k.opts.Deterministic {
			return errors.New("--net=host needs parallel mode: the host network is outside the deterministic run (drop --det)")
		}
		if !hostNetSupported {
			return errors.New("--net=host is only supported on Linux hosts")
		}
		return nil
	}
	return errors.New("--net=" + k.opts.Net + ": want loopback or host")
}

// hostNet: AF_INET/AF_INET6 sockets of this kernel are host sockets.
func (k *Kernel) hostNet() bool { return k.opts.Net == NetHost }

// hostSockCalls are the host-socket versions of the socket syscalls
// (socket_host_linux.go): each answers handled=false when the call is not
// for a host socket, and the in-kernel handler runs.
type hostSockCall func(t *Task, a [6]uint64) (ret uint64, handled bool)

// wrapHostSockCalls puts the host-socket handlers in front of the
// in-kernel ones (called at the end of socket.go's init, after they are
// registered). A kernel without --net=host pays one option test per call.
func wrapHostSockCalls() {
	for name, host := range hostSockCalls {
		inner := namedSyscalls[name]
		if inner == nil {
			panic("tasks: host socket call " + name + " has no in-kernel handler")
		}
		namedSyscalls[name] = func(t *Task, a [6]uint64) uint64 {
			if t.tg.k.hostNet() {
				if r, ok := host(t, a); ok {
					return r
				}
			}
			return inner(t, a)
		}
	}
}
