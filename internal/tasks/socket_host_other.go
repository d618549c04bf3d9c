//go:build !linux

package tasks

// hostNetSupported: --net=host needs a Linux host (the guest's socket
// ABI is passed to the host kernel as it is); elsewhere Start refuses it.
const hostNetSupported = false

// hostSockCalls: none outside Linux (the in-kernel handlers answer).
var hostSockCalls = map[string]hostSockCall{}
