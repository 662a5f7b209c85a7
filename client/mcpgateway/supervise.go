package mcpgateway

import (
	"os"
)

// The supervisor: how an upstream started by a command never outlives the gateway, whatever launched it
// (npx, sh -c, uvx, docker run) and however the gateway ends (kill -9 included).
//
// A parent-death signal reaches the process the gateway started, not the processes that one starts: kill -9
// of the gateway in front of `npx -y server` leaves `sh -c server` and `node` running. So with
// CommandTransport.Supervisor set, the gateway does not start the upstream itself: it starts a small
// watchdog (the gateway's own binary again, told by SupervisorEnv what it is, see RunSupervisorIfAsked) with
// the upstream's command, and keeps the write end of a pipe (the lifeline) whose read end the watchdog
// holds. The watchdog
//
//   - makes itself a child subreaper (Linux, PR_SET_CHILD_SUBREAPER): every process of the upstream whose
//     parent dies (node, once sh is gone) becomes its child, instead of init's, so none is lost from view;
//   - starts the upstream in a process group of its own, with the parent-death signal SIGKILL (should the
//     watchdog itself be killed), passing it its stdin, stdout and stderr as they are (no copy: the
//     messages go straight between the gateway and the upstream), and gives up its own copies of stdin and
//     stdout so that the gateway sees the upstream's stdout end when the upstream's ends;
//   - passes SIGTERM, SIGINT and SIGHUP on to the upstream's group;
//   - when the lifeline ends (the gateway closed it, or the gateway died: the kernel closes a dead process's
//     files, kill -9 included), or when the upstream exits, kills the upstream's group and every process
//     descending from the watchdog (found in /proc; subreaping makes them its children) with SIGKILL, again
//     until none is left (bounded by supervisorCleanup), then exits (with the upstream's status when it
//     exited by itself).
//
// Limits: a process that left the tree by being started by another service (a container run by the Docker
// daemon) is not the watchdog's descendant; `docker run --rm -i` ends its container when its stdin (the
// client's side) closes. Outside Linux there is no subreaper: the upstream's group is killed, a process that
// left it (setsid) is not found.

// SupervisorEnv is the environment variable that makes a program run as the watchdog of an upstream
// (RunSupervisorIfAsked); its value is the file descriptor number of the lifeline. It is removed from the
// upstream's environment.
const SupervisorEnv = "GUARD_MCP_SUPERVISOR_LIFELINE"

// RunSupervisorIfAsked runs the program as the watchdog of an upstream and exits when SupervisorEnv is set
// (the gateway started it: see CommandTransport.Supervisor); otherwise it returns at once. Call it first
// thing in main of a program whose binary is a CommandTransport's Supervisor (guard calls it; a test binary
// calls it in TestMain). The arguments are the upstream's program path, then its argv (argv[0] first).
func RunSupervisorIfAsked() {
	fd := os.Getenv(SupervisorEnv)
	if fd == "" {
		return
	}
	os.Exit(supervise(fd, os.Args[1:]))
}
