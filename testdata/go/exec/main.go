// Command exec runs other Go guests with os/exec (fork/exec via clone and
// execve): "hello" and "exit" from the directory of this program
// (filepath.Dir(os.Args[0]) + "/NAME", which keeps a relative directory
// such as "." a path rather than a name looked up in $PATH), capturing stdout and the exit status (hello
// also gets its stdin from a pipe fed by a goroutine), and a missing
// program.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	dir := filepath.Dir(os.Args[0]) + string(filepath.Separator)

	cmd := exec.Command(dir + "hello")
	cmd.Stdin = strings.NewReader("ignored input\n")
	out, err := cmd.Output()
	fmt.Printf("hello: output %q, err %v, exit code %d\n", out, err, cmd.ProcessState.ExitCode())

	cmd = exec.Command(dir + "exit")
	out, err = cmd.Output()
	var ee *exec.ExitError
	fmt.Printf("exit: output %q, ExitError %v, exit code %d\n", out, errors.As(err, &ee), cmd.ProcessState.ExitCode())

	err = exec.Command(dir + "no-such-program").Run()
	fmt.Println("missing program: not exist:", errors.Is(err, fs.ErrNotExist))
}
