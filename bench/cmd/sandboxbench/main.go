// Command sandboxbench times `echo hi` through codetools' bash in each
// way it can run a command here (contained only, each sandbox backend
// with a sandbox per call and in the session's sandbox),
// beside bare bwrap and unshare started the same way, and prints the
// medians and the CPU time (user+sys of this process and every process
// it reaped, its sandbox servers included) per call of a case, its tools'
// New and Close included, which the machine's load changes less than the
// wall time (bench/session_sandbox.sh runs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"syscall"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

func main() {
	runs := flag.Int("runs", 50, "calls per case")
	only := flag.String("only", "", "a regular expression: run only the cases whose name it matches")
	samples := flag.Bool("samples", false, "also print every call's time, a line each (case name, tab, microseconds), for pooling the runs of several processes")
	flag.Parse()
	match, err := regexp.Compile(*only)
	if err != nil {
		fail(err)
	}
	dir, err := os.MkdirTemp("", "sandboxbench-*")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	allowed := []string{"proxy.golang.org"}
	cases := []struct {
		name string
		opts []codetools.Option
	}{
		{"bash, contained (no sandbox)", nil},
		{"bash, landlock, a sandbox per call", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "landlock"})}},
		{"bash, landlock, the session's sandbox", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "landlock"}), codetools.WithSessionSandbox()}},
		{"bash, bubblewrap, a sandbox per call", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "bubblewrap"})}},
		{"bash, bubblewrap, the session's sandbox", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "bubblewrap"}), codetools.WithSessionSandbox()}},
		// With an allow-list: the proxy's listener made and passed per command.
		{"bash, landlock, per call, allow-list", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "landlock", AllowHosts: allowed})}},
		{"bash, landlock, session, allow-list", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "landlock", AllowHosts: allowed}), codetools.WithSessionSandbox()}},
		{"bash, bubblewrap, per call, allow-list", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "bubblewrap", AllowHosts: allowed})}},
		{"bash, bubblewrap, session, allow-list", []codetools.Option{codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Backend: "bubblewrap", AllowHosts: allowed}), codetools.WithSessionSandbox()}},
	}
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load: %s", l)
	}
	fmt.Printf("%-42s %10s %10s %10s\n", "case", "median", "p90", "CPU/call")
	for _, tc := range cases {
		if !match.MatchString(tc.name) {
			continue
		}
		opts := tc.opts
		if opts != nil {
			opts = append(opts, codetools.WithSandboxRequired())
		}
		cpu0 := cpuTime()
		c, err := codetools.New(dir, opts...)
		if err != nil {
			fmt.Printf("%-42s skipped: %v\n", tc.name, err)
			continue
		}
		ds := timeRuns(*runs, func() error {
			out, err := c.Resolve(context.Background(), llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "echo hi"}})
			if err == nil && out != "hi" {
				err = fmt.Errorf("answer %q", out)
			}
			return err
		})
		c.Close()
		report(tc.name, ds, (cpuTime()-cpu0)/time.Duration(*runs+1), *samples)
	}
	bare := []struct {
		name string
		argv []string
	}{
		{"bare bash -c 'echo hi'", []string{"bash", "-c", "echo hi"}},
		{"bare unshare -pfnm --mount-proc bash", []string{"unshare", "-p", "-f", "-n", "-m", "--mount-proc", "bash", "-c", "echo hi"}},
		{"bare bwrap --unshare-all (ro /) bash", []string{"bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "bash", "-c", "echo hi"}},
	}
	for _, b := range bare {
		if !match.MatchString(b.name) {
			continue
		}
		if _, err := exec.LookPath(b.argv[0]); err != nil {
			fmt.Printf("%-42s skipped: %v\n", b.name, err)
			continue
		}
		cpu0 := cpuTime()
		ds := timeRuns(*runs, func() error {
			out, err := exec.Command(b.argv[0], b.argv[1:]...).CombinedOutput()
			if err == nil && string(out) != "hi\n" {
				err = fmt.Errorf("output %q", out)
			}
			return err
		})
		report(b.name, ds, (cpuTime()-cpu0)/time.Duration(*runs+1), *samples)
	}
}

// cpuTime is the user and system time of this process and of every
// process it reaped (and they reaped).
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// timeRuns times n calls of f after one warm-up; nil when one fails.
func timeRuns(n int, f func() error) []time.Duration {
	if err := f(); err != nil {
		fmt.Fprintln(os.Stderr, "warm-up:", err)
		return nil
	}
	ds := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return nil
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds
}

func report(name string, ds []time.Duration, cpu time.Duration, samples bool) {
	if len(ds) == 0 {
		fmt.Printf("%-42s failed\n", name)
		return
	}
	if samples {
		for _, d := range ds {
			fmt.Printf("sample\t%s\t%d\n", name, d.Microseconds())
		}
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("%-42s %10s %10s %10s\n", name, ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]), ms(cpu))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sandboxbench:", err)
	os.Exit(1)
}
