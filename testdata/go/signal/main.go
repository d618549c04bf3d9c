// Command signal uses os/signal: Notify for SIGUSR1 and SIGUSR2, signals
// sent with syscall.Kill to the process and with syscall.Tgkill to the
// current thread, signal.Ignore, signal.Stop, and finally a SIGTERM with
// the default action, which the Go runtime turns into death by that signal
// (exit status 128+15).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

func main() {
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGUSR2)

	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		fmt.Println("kill:", err)
	}
	fmt.Println("received:", <-c)

	runtime.LockOSThread()
	if err := syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGUSR2); err != nil {
		fmt.Println("tgkill:", err)
	}
	runtime.UnlockOSThread()
	fmt.Println("received:", <-c)

	for i := 0; i < 3; i++ {
		syscall.Kill(os.Getpid(), syscall.SIGUSR1)
		fmt.Println("received:", <-c)
	}

	signal.Ignore(syscall.SIGUSR2)
	syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	select {
	case s := <-c:
		fmt.Println("ignored signal was delivered:", s)
	case <-time.After(50 * time.Millisecond):
		fmt.Println("ignored SIGUSR2: nothing received")
	}
	fmt.Println("SIGUSR2 ignored:", signal.Ignored(syscall.SIGUSR2))

	signal.Stop(c)
	fmt.Println("raising SIGTERM (default action)")
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	time.Sleep(5 * time.Second)
	fmt.Println("still alive after SIGTERM (wrong)")
}
