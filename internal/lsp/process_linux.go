package lsp

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolate puts the server in a process group of its own, killed with the
// client if the client dies.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the server and every process of its group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}

// limitMemory caps the server's address space (RLIMIT_AS), inherited by
// the processes it starts from then on. 0 leaves it unlimited.
func limitMemory(cmd *exec.Cmd, bytes uint64) error {
	if bytes == 0 || cmd.Process == nil {
		return nil
	}
	lim := unix.Rlimit{Cur: bytes, Max: bytes}
	return unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_AS, &lim, nil)
}

// rss returns the resident set of process pid in bytes (VmRSS in
// /proc/PID/status).
func rss(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("lsp: no VmRSS")
}

// rssTree returns the resident bytes of pid and every process below it (a
// sandbox's init and the server it runs, and the server's children).
func rssTree(pid int) int64 {
	var total int64
	seen := map[int]bool{}
	for queue := []int{pid}; len(queue) > 0 && len(seen) < 4096; {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		if n, err := rss(p); err == nil {
			total += n
		}
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			data, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			for _, f := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return total
}
