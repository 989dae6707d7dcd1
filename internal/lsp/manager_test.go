package lsp

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFake(t *testing.T, mode string, opts Options) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	m := New(dir, []Spec{fakeSpec(t, mode)}, opts)
	t.Cleanup(func() { _ = m.Close() })
	return m, filepath.Join(dir, "a.fake")
}

func diagnose(t *testing.T, m *Manager, abs, text string, within time.Duration) (Report, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	start := time.Now()
	rep, err := m.Diagnose(ctx, abs, text, 50*time.Millisecond)
	require.NoError(t, err)
	return rep, time.Since(start)
}

func TestDiagnoseReportsAndClears(t *testing.T) {
	m, abs := newFake(t, "ok", Options{})
	rep, _ := diagnose(t, m, abs, "fine\n\"é\" BAD\nMEH\n", 20*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	require.Len(t, rep.Diagnostics, 2)
	d := rep.Diagnostics[0]
	assert.Equal(t, SeverityError, d.Severity)
	assert.Equal(t, "bad", d.CodeString())
	assert.Equal(t, 1, d.Range.Start.Line)
	// The server counts UTF-16 units (4 before BAD); é is 2 bytes.
	assert.Equal(t, 5, d.Range.Start.Character)
	assert.Equal(t, "7", rep.Diagnostics[1].CodeString())

	rep, _ = diagnose(t, m, abs, "fine\n", 20*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	assert.Empty(t, rep.Diagnostics)
}

func TestCrashedServerIsRestartedOnce(t *testing.T) {
	m, abs := newFake(t, "crash", Options{})
	rep, _ := diagnose(t, m, abs, "BAD\n", 20*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	require.Len(t, rep.Diagnostics, 1)
	// didChange makes it exit: the answer says so.
	rep, took := diagnose(t, m, abs, "BAD BAD\n", 20*time.Second)
	assert.False(t, rep.Fresh)
	assert.Contains(t, rep.Note, "stopped")
	assert.Less(t, took, 15*time.Second)
	// The next touch starts it again, once.
	var fresh Report
	require.Eventually(t, func() bool {
		fresh, _ = diagnose(t, m, abs, "BAD\n", 20*time.Second)
		return fresh.Fresh
	}, 20*time.Second, 50*time.Millisecond)
	assert.Len(t, fresh.Diagnostics, 1)
	diagnose(t, m, abs, "ok\n", 20*time.Second) // crashes again
	require.Eventually(t, func() bool {
		rep, _ = diagnose(t, m, abs, "ok\n", 20*time.Second)
		return strings.Contains(rep.Note, "not started again")
	}, 20*time.Second, 50*time.Millisecond)
}

func TestServerHangingAtInitialize(t *testing.T) {
	m, abs := newFake(t, "hang", Options{StartTimeout: 300 * time.Millisecond, ShutdownTimeout: 200 * time.Millisecond})
	rep, took := diagnose(t, m, abs, "BAD\n", 100*time.Millisecond)
	assert.Contains(t, rep.Note, "still starting")
	assert.Less(t, took, 5*time.Second)
	rep, took = diagnose(t, m, abs, "BAD\n", 10*time.Second)
	assert.Contains(t, rep.Note, "did not answer initialize within 300ms")
	assert.Less(t, took, 9*time.Second)
	start := time.Now()
	require.NoError(t, m.Close())
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestFloodOfDiagnosticsIsBounded(t *testing.T) {
	m, abs := newFake(t, "flood", Options{MaxDiagnosticsPerFile: 100, MaxFiles: 500})
	rep, took := diagnose(t, m, abs, "x\n", 30*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	assert.Len(t, rep.Diagnostics, 100)
	assert.Less(t, took, 25*time.Second)
	// MaxFiles, plus the open document, which is always kept.
	assert.LessOrEqual(t, len(m.WorkspaceDiagnostics()), 501)
}

func TestStubbornServerIsKilledWithItsChildren(t *testing.T) {
	m, abs := newFake(t, "stubborn", Options{ShutdownTimeout: 300 * time.Millisecond})
	rep, _ := diagnose(t, m, abs, "BAD\n", 20*time.Second)
	require.True(t, rep.Fresh, rep.Note)
	var pid int
	require.Eventually(t, func() bool {
		for _, st := range m.Stats() {
			for _, e := range m.servers {
				if e.cur != nil && st.PID > 0 {
					if mm := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(e.cur.stderr.String()); mm != nil {
						pid, _ = strconv.Atoi(mm[1])
					}
				}
			}
		}
		return pid > 0
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, syscall.Kill(pid, 0), "the child runs")
	start := time.Now()
	require.NoError(t, m.Close())
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Eventually(t, func() bool {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(data), ") Z ")
	}, 5*time.Second, 20*time.Millisecond, "the server's child outlived it")
}

func TestServerWritingAGibibyteToStderr(t *testing.T) {
	if testing.Short() || os.Getenv("LLMTOOLKIT_STRESS") == "" {
		t.Skip("stress test: set LLMTOOLKIT_STRESS=1")
	}
	m, abs := newFake(t, "stderr", Options{MaxStderr: 4096})
	// The edit's deadline comes first: it answers with a note.
	rep, took := diagnose(t, m, abs, "BAD\n", 200*time.Millisecond)
	assert.Contains(t, rep.Note, "still starting")
	assert.Less(t, took, 5*time.Second)
	var fresh Report
	require.Eventually(t, func() bool {
		fresh, _ = diagnose(t, m, abs, "BAD\n", 2*time.Second)
		return fresh.Fresh
	}, 120*time.Second, 100*time.Millisecond)
	st := m.Stats()
	require.Len(t, st, 1)
	assert.GreaterOrEqual(t, st[0].StderrBytes, int64(1<<30))
	for _, e := range m.servers {
		assert.LessOrEqual(t, len(e.cur.stderr.String()), 4096)
	}
}

func TestMissingBinaryIsSkippedWithOneLogLine(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	m := New(dir, []Spec{{Name: "nope", Command: []string{"llmtoolkit-no-such-language-server"}, Languages: map[string]string{".nope": "nope"}}},
		Options{Logger: logger})
	defer m.Close()
	for range 3 {
		_, err := m.Diagnose(context.Background(), filepath.Join(dir, "a.nope"), "x", time.Millisecond)
		require.ErrorIs(t, err, ErrNoServer)
	}
	_, err := m.Diagnose(context.Background(), filepath.Join(dir, "a.txt"), "x", time.Millisecond)
	require.ErrorIs(t, err, ErrNoServer)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 1, strings.Count(buf.String(), "language server not found"), buf.String())
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestFramesAreBounded(t *testing.T) {
	var huge bytes.Buffer
	huge.WriteString("Content-Length: 999999999\r\n\r\n")
	_, err := readHeader(bufioReader(&huge), 1<<20)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	long := bytes.NewBufferString(strings.Repeat("a", 10<<10) + "\r\n")
	_, err = readHeader(bufioReader(long), 1<<20)
	require.ErrorContains(t, err, "header line too long")
}
