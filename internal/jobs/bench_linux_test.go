package jobs

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkOutputToRead measures the latency from a job's output to a
// waiting Read: a line written to cat's input comes back through its
// output. settle=default is what job_output and write_stdin wait (the
// burst's pause); settle=0 is the pipe and the wake-up alone.
func BenchmarkOutputToRead(b *testing.B) {
	for _, tc := range []struct {
		name   string
		settle time.Duration
		tty    bool
	}{{"pipe/settle=default", 0, false}, {"pipe/settle=0", time.Microsecond, false}, {"tty/settle=0", time.Microsecond, true}} {
		b.Run(tc.name, func(b *testing.B) {
			tb := NewTable(Limits{}, Logs{}, nil)
			defer tb.Close()
			j, err := tb.Start(Spec{Cmd: command(b, "stty -echo 2>/dev/null; exec cat", tc.tty), TTY: tc.tty, Stdin: true})
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			j.Read(context.Background(), ReadOptions{})
			b.ResetTimer()
			for b.Loop() {
				if err := j.Write([]byte("x\n")); err != nil {
					b.Fatal(err)
				}
				if c := j.Read(context.Background(), ReadOptions{Wait: 5 * time.Second, Settle: tc.settle}); len(c.Data) == 0 {
					b.Fatal("no output")
				}
			}
		})
	}
}

// BenchmarkIdleMemory reports the memory an idle job and an idle terminal
// cost: the host's Go heap per job, and the resident memory of its
// processes (the helper, the shell).
func BenchmarkIdleMemory(b *testing.B) {
	for _, tc := range []struct {
		name   string
		script string
		tty    bool
	}{{"job", "exec sleep 1000", false}, {"terminal", "PS1='$ ' exec bash --norc -i", true}} {
		b.Run(tc.name, func(b *testing.B) {
			const n = 16
			for b.Loop() {
				tb := NewTable(Limits{MaxJobs: n}, Logs{}, nil)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				var jobs []*Job
				for range n {
					j, err := tb.Start(Spec{Cmd: command(b, tc.script, tc.tty), TTY: tc.tty, Stdin: true})
					if err != nil {
						b.Fatal(err)
					}
					jobs = append(jobs, j)
				}
				time.Sleep(time.Second)
				runtime.GC()
				runtime.ReadMemStats(&after)
				var rss int64
				for _, j := range jobs {
					rss += treeRSS(j.spec.Cmd.Process.Pid)
				}
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n/1024, "heap-KiB/job")
				b.ReportMetric(float64(rss)/n/1024, "rss-KiB/job")
				tb.Close()
			}
		})
	}
}

// treeRSS sums VmRSS (bytes) of pid and its descendants.
func treeRSS(pid int) int64 {
	var sum int64
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			sum += kb * 1024
		}
	}
	children, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	for _, c := range strings.Fields(string(children)) {
		if n, err := strconv.Atoi(c); err == nil {
			sum += treeRSS(n)
		}
	}
	return sum
}
