package guard_test

import (
	"bytes"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// captureLog sends the default logger to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// panicHere panics from a function of its own, so that the stack names it.
func panicHere() error { panic("boom") }

var errSentinel = errors.New("sentinel")

func TestGo(t *testing.T) {
	wrapped := func(v any, stack []byte) error { return errors.Join(errSentinel, &guard.Error{Value: v, Stack: stack}) }
	tests := []struct {
		name    string
		fn      func() error
		wrap    guard.Wrap
		want    error
		panics  bool
		sentVal any
	}{
		{"nil", func() error { return nil }, nil, nil, false, nil},
		{"error", func() error { return errSentinel }, nil, errSentinel, false, nil},
		{"Goexit", func() error { runtime.Goexit(); return nil }, nil, guard.ErrGoexit, false, nil},
		{"panic", panicHere, nil, nil, true, "boom"},
		{"panic wrapped", panicHere, wrapped, errSentinel, true, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := captureLog(t)
			done := guard.Go("test goroutine", tt.fn, tt.wrap)
			err, ok := <-done
			require.True(t, ok, "one value is sent")
			_, ok = <-done
			assert.False(t, ok, "then the channel is closed")
			if !tt.panics {
				assert.Equal(t, tt.want, err)
				assert.Empty(t, log.String())
				return
			}
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
			}
			var ge *guard.Error
			require.ErrorAs(t, err, &ge)
			assert.Equal(t, tt.sentVal, ge.Value)
			assert.Contains(t, string(ge.Stack), "panicHere", "the stack holds the frame that panicked")
			out := log.String()
			assert.Contains(t, out, "goroutine panicked")
			assert.Contains(t, out, "goroutine=\"test goroutine\"")
			assert.Contains(t, out, "panicHere", "the log holds the stack")
		})
	}
}

func TestRecoverReportsOnlyPanics(t *testing.T) {
	captureLog(t)
	var got []error
	report := func(err error) { got = append(got, err) }
	func() {
		defer guard.Recover("quiet", nil, report)
	}()
	assert.Empty(t, got)
	func() {
		defer guard.Recover("loud", nil, report)
		_ = panicHere()
	}()
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0].Error(), "panic: boom"), got[0].Error())
}

func TestRecoveredKeepsTheStack(t *testing.T) {
	log := captureLog(t)
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = guard.Recovered("converter", v, nil)
			}
		}()
		_ = panicHere()
	}()
	var ge *guard.Error
	require.ErrorAs(t, err, &ge)
	assert.Contains(t, string(ge.Stack), "panicHere")
	assert.Contains(t, log.String(), "panicHere")
}
