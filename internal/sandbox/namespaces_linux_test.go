//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Issue 47, row 5: every backend's command has IPC and UTS namespaces of
// its own, read-only policies too: it sees no System V segment of the
// host, cannot read or write one by its id, and shares no hostname.
func TestSandboxOwnIPCAndUTS(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("perl reads the segment: not installed (CI must have it)")
		}
		t.Skip("perl reads the segment: not installed")
	}
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o666)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	mem, err := unix.SysvShmAttach(id, 0, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.SysvShmDetach(mem) })
	copy(mem, "host-secret")
	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	require.NoError(t, err)
	hostUTS, err := os.Readlink("/proc/self/ns/uts")
	require.NoError(t, err)
	hostname, err := os.Hostname()
	require.NoError(t, err)

	for name, b := range backends(t) {
		for _, mode := range []Mode{WorkspaceWrite, ReadOnly} {
			t.Run(fmt.Sprintf("%s/%s", name, mode), func(t *testing.T) {
				p := policyFor(t, false)
				p.Mode = mode
				out, _ := run(t, b, p, fmt.Sprintf(`ipcs -m; readlink /proc/self/ns/ipc /proc/self/ns/uts;
					perl -e 'shmread(%[1]d, $v, 0, 11) or die "read: $!\n"; print "read:$v\n"; shmwrite(%[1]d, "sandboxed!!", 0, 11) and print "wrote\n"';
					hostname sandboxed-host 2>&1; hostname`, id))
				for _, line := range strings.Split(out, "\n") {
					if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(f[0], "0x") {
						assert.NotEqual(t, strconv.Itoa(id), f[1], "the host's segment is listed: %s", out)
					}
				}
				assert.NotContains(t, out, "read:host-secret", "the host's segment was read")
				assert.NotContains(t, out, "wrote")
				assert.Equal(t, "host-secret", string(mem[:11]), "the host's segment was written")
				assert.NotContains(t, out, hostIPC, "the host's IPC namespace")
				assert.NotContains(t, out, hostUTS, "the host's UTS namespace")
				now, err := os.Hostname()
				require.NoError(t, err)
				assert.Equal(t, hostname, now, "the hostname changed on the host")
				assert.True(t, strings.Contains(out, "ipc:[") && strings.Contains(out, "uts:["), "the namespaces were not shown: %s", out)
			})
		}
	}
}
