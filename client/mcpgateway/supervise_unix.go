//go:build unix

package mcpgateway

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisorCleanup bounds the watchdog's killing of what is left of the upstream.
const supervisorCleanup = 2 * time.Second

// supervise is the watchdog (supervise.go): lifelineFD is the descriptor of the lifeline's read end, args
// the upstream's program path and argv. It returns the watchdog's exit status.
func supervise(lifelineFD string, args []string) int {
	fd, err := strconv.Atoi(lifelineFD)
	if err != nil || fd < 3 || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "guard mcp supervisor: bad invocation")
		return 2
	}
	syscall.CloseOnExec(fd) // the upstream does not get it
	lifeline := os.NewFile(uintptr(fd), "lifeline")
	_ = os.Unsetenv(SupervisorEnv)
	setSubreaper()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	setParentDeathSignal(attr.Sys)
	pid, err := syscall.ForkExec(args[0], args[1:], attr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guard mcp supervisor: start %s: %v\n", args[0], err)
		return 127
	}
	// The gateway sees the upstream's stdout end when the upstream's (and its children's) copies close.
	if null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0); err == nil {
		_ = unix.Dup2(int(null.Fd()), 0)
		_ = unix.Dup2(int(null.Fd()), 1)
		_ = null.Close()
	}

	exited := make(chan syscall.WaitStatus, 1)
	go func() { // reaps every child (subreaped orphans too) until the upstream itself is reaped
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || wpid == pid {
				exited <- ws
				return
			}
		}
	}()
	cut := make(chan struct{})
	go func() { // the lifeline ends: the gateway closed it, or died
		var b [64]byte
		for {
			if _, err := lifeline.Read(b[:]); err != nil {
				close(cut)
				return
			}
		}
	}()
	for {
		select {
		case sig := <-sigs:
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		case <-cut:
			killDescendants(pid)
			return 1
		case ws := <-exited:
			killDescendants(pid)
			switch {
			case ws.Exited():
				return ws.ExitStatus()
			case ws.Signaled():
				return 128 + int(ws.Signal())
			}
			return 1
		}
	}
}

// killDescendants kills the upstream's process group and every descendant of the watchdog with SIGKILL
// and reaps them, again until none is left or supervisorCleanup has passed.
func killDescendants(pgid int) {
	deadline := time.Now().Add(supervisorCleanup)
	self := os.Getpid()
	for {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		for _, p := range descendants(self) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return // no child left
			}
			if err != nil || wpid <= 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
