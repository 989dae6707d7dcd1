package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionOf(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build information", nil, false, Dev},
		{"the core is the main module", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.3"}}, true, "v1.2.3"},
		{"the core built from its folder", &debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}}, true, Dev},
		{"the core as a dependency", &debug.BuildInfo{
			Main: debug.Module{Path: "example.com/host", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "example.com/other", Version: "v9.9.9"}, {Path: ModulePath, Version: "v0.4.0"}},
		}, true, "v0.4.0"},
		{"a host without the core", &debug.BuildInfo{Main: debug.Module{Path: "example.com/host"}}, true, Dev},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionOf(tt.info, tt.ok))
		})
	}
	assert.NotEmpty(t, Version())
}
