//go:build linux

package proc

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// KillScope tells the model, in bash's description, what is killed,
// when the scan alone finds the call's processes (no PID namespace).
const KillScope = "The command is killed with the processes it started after timeout seconds (default %d, at most %d); " +
	"background jobs and daemons it leaves are killed when it ends, though one that detaches and loses its parent quickly may survive."

// How the processes of a call are found and killed.
const (
	procTokenVar    = "LLMTOOLKIT_BASH_CALL" // set to a random token in every call's environment
	procPollEvery   = 200 * time.Millisecond // descendants are recorded this often while the command runs
	procKillWait    = 5 * time.Second        // KillAll gives up on processes that outlive this
	procEnvironScan = 4 << 20                // bytes of /proc/PID/environ searched for the token
	procUnsureWait  = 500 * time.Millisecond // KillAll scans again this long while a process's environment reads empty
)

// procGuard finds every process a bash call started, so that none outlives
// the call. On Linux it goes through /proc: the shell starts a new session,
// and a process belongs to the call when it is the shell, is in its session
// or process group, descends from a process of the call, was seen descending
// from one while the command ran (polled every procPollEvery), still has the
// call's token in its environment, or holds the call's output pipe. Only a
// process that clears its environment, closes the pipe, leaves the session
// and loses its parent between two polls escapes; KillAll reports processes
// it found but could not kill. The shell is not reaped before KillAll, so
// its pid (the session and group id) cannot be reused meanwhile.
type procGuard struct {
	cmd     *exec.Cmd
	trap    *Trap
	token   []byte // procTokenVar=TOKEN
	pipe    string // "pipe:[INODE]" of the output pipe, "" if unknown
	pid     int    // the shell: leader of the call's session and group
	start   uint64 // the shell's start time, in clock ticks since boot
	waitErr error  // cmd.Wait's result once reaped
	reaped  bool

	seen     map[int]uint64 // descendants seen while polling (pid -> start time); poll's, then KillAll's
	pids     []int          // scan's, reused
	dirBuf   [8 << 10]byte  // scan's, reused
	stopPoll chan struct{}
	pollDone chan struct{}
	stopOnce sync.Once
}

// newProcGuard prepares cmd, before it starts, so that its processes can be
// found: a new session, and the call's token in the environment. out is the
// write end of the output pipe.
func newProcGuard(cmd *exec.Cmd, out *os.File, trap *Trap) *procGuard {
	g := &procGuard{cmd: cmd, trap: trap, seen: map[int]uint64{}, stopPoll: make(chan struct{}), pollDone: make(chan struct{})}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	kv := procTokenVar + "=" + rand.Text()
	cmd.Env = append(cmd.Env, kv)
	g.token = []byte(kv)
	var st syscall.Stat_t
	if err := syscall.Fstat(int(out.Fd()), &st); err == nil {
		g.pipe = fmt.Sprintf("pipe:[%d]", st.Ino)
	}
	return g
}

// Started begins watching the command, once it runs.
func (g *procGuard) Started() {
	g.pid = g.cmd.Process.Pid
	if st, ok := readProcStat(g.pid); ok {
		g.start = st.start
	}
	g.trap.Go("process watcher", g.poll, func() { close(g.pollDone) })
}

// WaitExited returns when the shell has exited, leaving it unreaped.
func (g *procGuard) WaitExited() {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, g.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EINTR) {
			g.waitErr, g.reaped = g.cmd.Wait(), true // cannot wait without reaping: reap
			return
		}
	}
}

// Reap collects the shell's exit status (cmd.Wait's error).
func (g *procGuard) Reap() error {
	if !g.reaped {
		g.waitErr, g.reaped = g.cmd.Wait(), true
	}
	return g.waitErr
}

// poll records the command's descendants until KillAll, so that one whose
// parent dies is still known.
func (g *procGuard) poll() {
	t := time.NewTicker(procPollEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stopPoll:
			return
		case <-t.C:
			g.trap.Stage("watch")
			procs, _, _ := g.scan(false) // KillAll reports a failure
			for _, p := range procs {
				g.seen[p.pid] = p.start
			}
		}
	}
}

// KillAll kills every process of the call, the shell included, and
// returns when none is left. If some are still there after procKillWait
// (not ours to kill, or stuck in the kernel), it returns a note that names
// them for the answer; otherwise "".
func (g *procGuard) KillAll() string {
	g.stopOnce.Do(func() { close(g.stopPoll) })
	<-g.pollDone
	deadline := time.Now().Add(procKillWait)
	unsureUntil := time.Now().Add(procUnsureWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		// The group first, which needs no /proc: the shell is not reaped
		// yet, so its pid still names the call's group.
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
		procs, unsure, err := g.scan(true)
		if err != nil {
			return fmt.Sprintf("processes the command started outside its process group may be left: cannot list processes: %v", err)
		}
		if len(procs) == 0 && unsure && time.Now().Before(unsureUntil) {
			// A process in the middle of an exec shows an empty
			// environment (the new one is not set up yet): a daemon of the
			// call, detached from it, would go unnoticed (a nohup daemon
			// exec'ing sleep, under load). Look again once it is done.
			time.Sleep(pause)
			continue
		}
		if len(procs) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			left := make([]string, len(procs))
			for i, p := range procs {
				left[i] = fmt.Sprintf("%d (%s)", p.pid, procName(p.pid))
			}
			return fmt.Sprintf("%d processes the command started could not be killed: %s", len(left), strings.Join(left, ", "))
		}
		for _, p := range procs {
			killProc(p)
		}
		time.Sleep(pause)
	}
}

// killProc sends SIGKILL to p through a pidfd, after checking that the pid
// still names the process that was scanned.
func killProc(p procStat) {
	proc, err := os.FindProcess(p.pid) // holds a pidfd: the pid cannot be reused under it
	if err != nil {
		return
	}
	defer proc.Release()
	if st, ok := readProcStat(p.pid); !ok || st.start != p.start {
		return
	}
	_ = proc.Signal(syscall.SIGKILL) // a failure shows in the next scan
}

// procStat is what /proc/PID/stat says of a live process.
type procStat struct {
	pid, ppid, pgrp, sid int
	start                uint64 // clock ticks since boot
	state                byte   // R, S, D, Z, ...
}

// scan lists the live processes of the call. Without full it skips the
// costly checks (environment and open files) and is what polling uses.
// unsure reports a process left out whose environment read empty: it may
// be in the middle of an exec, its environment (and the token) not there
// yet.
func (g *procGuard) scan(full bool) (procs []procStat, unsure bool, err error) {
	pids, err := listPids(g.dirBuf[:], g.pids[:0])
	if err != nil {
		return nil, false, err
	}
	g.pids = pids
	self := os.Getpid()
	// Only processes started after the shell can belong to the call.
	cand := map[int]procStat{}
	for _, pid := range pids {
		if pid == self {
			continue
		}
		st, ok := readProcStat(pid)
		if !ok || st.start < g.start {
			continue
		}
		cand[pid] = st
	}
	member := map[int]bool{}
	var empty []int // environments that read empty
	for pid, st := range cand {
		seenStart, seen := g.seen[pid]
		if pid == g.pid || st.sid == g.pid || st.pgrp == g.pid || (seen && seenStart == st.start) {
			member[pid] = true
			continue
		}
		if !full {
			continue
		}
		token, none := g.hasToken(pid)
		// The host's other children may hold the pipe between fork and exec.
		if token || st.ppid != self && g.holdsPipe(pid) {
			member[pid] = true
		} else if none && st.ppid > 2 { // not a kernel thread (kthreadd's children), whose environment is empty
			empty = append(empty, pid)
		}
	}
	// Descendants of members are members: follow parents until a fixpoint.
	for changed := true; changed; {
		changed = false
		for pid, st := range cand {
			if !member[pid] && member[st.ppid] {
				member[pid], changed = true, true
			}
		}
	}
	var out []procStat
	for pid := range member {
		if st := cand[pid]; st.state != 'Z' && st.state != 'X' {
			out = append(out, st)
		}
	}
	for _, pid := range empty {
		if st := cand[pid]; !member[pid] && st.state != 'Z' && st.state != 'X' {
			unsure = true
		}
	}
	slices.SortFunc(out, func(a, b procStat) int { return a.pid - b.pid })
	return out, unsure, nil
}

// listPids appends the pids listed in /proc to pids. It reads the folder
// into buf with getdents and decodes the names itself: scans run every
// procPollEvery, and os.File.Readdirnames allocates a string per entry.
func listPids(buf []byte, pids []int) ([]int, error) {
	fd, err := syscall.Open("/proc", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", &os.PathError{Op: "open", Path: "/proc", Err: err})
	}
	defer syscall.Close(fd)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list processes: %w", &os.PathError{Op: "getdents", Path: "/proc", Err: err})
		}
		if n <= 0 {
			return pids, nil
		}
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name (NUL-terminated)
		for rec := buf[:n]; len(rec) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				return nil, fmt.Errorf("list processes: bad directory entry in /proc")
			}
			pid, ok := 0, false
			for _, c := range rec[19:reclen] {
				if c == 0 {
					break
				}
				if c < '0' || c > '9' || pid > 1<<30 {
					ok = false
					break
				}
				pid, ok = pid*10+int(c-'0'), true
			}
			if ok {
				pids = append(pids, pid)
			}
			rec = rec[reclen:]
		}
	}
}

// hasToken reports whether the process's environment holds the call's
// token, and whether it read empty (env -i, or an exec under way).
func (g *procGuard) hasToken(pid int) (token, empty bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false, false
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	keep := len(g.token) - 1
	have := 0
	for read := 0; read < procEnvironScan; {
		n, err := f.Read(buf[have:])
		have += n
		read += n
		if bytes.Contains(buf[:have], g.token) {
			return true, false
		}
		if err != nil {
			return false, read == 0 && errors.Is(err, io.EOF) // io.EOF or unreadable
		}
		if have > keep { // keep the end: the token may straddle two reads
			have = copy(buf, buf[have-keep:have])
		}
	}
	return false, false
}

// holdsPipe reports whether the process has the call's output pipe open.
func (g *procGuard) holdsPipe(pid int) bool {
	if g.pipe == "" {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			if target, _ := os.Readlink(dir + n); target == g.pipe {
				return true
			}
		}
		if err != nil { // io.EOF at the end
			return false
		}
	}
}

// readProcStat parses /proc/PID/stat. It is called for every process at
// each scan, so it reads with plain system calls into a stack buffer.
func readProcStat(pid int) (procStat, bool) {
	var buf [512]byte
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return procStat{}, false
	}
	n, err := syscall.Read(fd, buf[:]) // the kernel writes the whole line at once
	for errors.Is(err, syscall.EINTR) {
		n, err = syscall.Read(fd, buf[:])
	}
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseProcStat(pid, buf[:n])
}

// parseProcStat reads "PID (NAME) STATE PPID PGRP SID ... STARTTIME ...";
// NAME may hold spaces and parentheses, so fields count from the last ')'.
// It runs for every process at each scan, so it does not allocate: the
// name is left to procName.
func parseProcStat(pid int, b []byte) (procStat, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	st := procStat{pid: pid}
	rest := b[end+1:]
	for i := 0; i < 20; i++ { // fields 3 (state) to 22 (starttime)
		rest = bytes.TrimLeft(rest, " ")
		n := bytes.IndexByte(rest, ' ')
		if n < 0 {
			n = len(rest)
		}
		field := bytes.TrimRight(rest[:n], "\n")
		rest = rest[n:]
		if len(field) == 0 {
			return procStat{}, false
		}
		var v int64
		if i > 0 {
			var err error
			if v, err = strconv.ParseInt(string(field), 10, 64); err != nil { // no allocation: the conversion is only for the call
				return procStat{}, false
			}
		}
		switch i {
		case 0:
			if len(field) != 1 {
				return procStat{}, false
			}
			st.state = field[0]
		case 1:
			st.ppid = int(v)
		case 2:
			st.pgrp = int(v)
		case 3:
			st.sid = int(v)
		case 19:
			if v < 0 {
				return procStat{}, false
			}
			st.start = uint64(v)
		}
	}
	return st, true
}

// Stat is what /proc/PID/stat says of a process.
type Stat struct {
	PPID, Pgrp, Sid int
	Start           uint64 // clock ticks since boot
	State           byte   // R, S, D, Z, ...
}

// ReadStat reads /proc/PID/stat; false when pid names no process.
func ReadStat(pid int) (Stat, bool) {
	st, ok := readProcStat(pid)
	return Stat{PPID: st.ppid, Pgrp: st.pgrp, Sid: st.sid, Start: st.start, State: st.state}, ok
}

// procName returns the process's name, "?" if it is gone.
func procName(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "?"
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return "?"
	}
	return string(data[open+1 : end])
}
