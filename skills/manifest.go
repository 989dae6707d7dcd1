package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Bounds of a skill's manifest ([Skill.Manifest]), the MCP skills
// extension's (SEP-2640): a server should not serve more.
const (
	// MaxManifestFiles bounds the files of one skill's manifest, SKILL.md
	// included.
	MaxManifestFiles = 512
	// MaxManifestBytes bounds the bytes of one skill's files, summed.
	MaxManifestBytes = 16 << 20
)

// File is one file of a skill's manifest: its path from the skill's
// folder (with forward slashes; "SKILL.md" for the skill's own), its size
// in bytes and the SHA-256 of its bytes, as "sha256:" and 64 lowercase
// hexadecimal digits.
type File struct {
	Path   string
	Size   int64
	Digest string
}

// Digest returns the digest of data in a manifest's form: "sha256:" and
// 64 lowercase hexadecimal digits.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Manifest returns every file of the skill, SKILL.md first and the others
// sorted, each with its size and digest: what a server lists for the
// skill (package mcp's skills extension). The files are read to digest
// them, bounded: a skill of more than [MaxManifestFiles] files or
// [MaxManifestBytes] bytes is refused with [ErrTooLarge]. The manifest of
// a skill a peer serves ([FromRemote]) is the peer's listing: nothing is
// read.
func (s Skill) Manifest(ctx context.Context) ([]File, error) {
	if r, ok := s.files.(*remoteFiles); ok {
		return r.manifest(), nil
	}
	if s.files == nil {
		return nil, fmt.Errorf("skill %q has no files", s.Name)
	}
	paths, more, err := s.files.list(ctx, MaxManifestFiles-1)
	if err != nil {
		return nil, fmt.Errorf("list the files of skill %q: %w", s.Name, err)
	}
	if more {
		return nil, fmt.Errorf("%w: skill %q has more than %d files", ErrTooLarge, s.Name, MaxManifestFiles)
	}
	out := make([]File, 0, len(paths)+1)
	left := int64(MaxManifestBytes)
	for _, p := range append([]string{"SKILL.md"}, paths...) {
		data, err := s.files.read(ctx, p, left)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", s.Name, err)
		}
		left -= int64(len(data))
		out = append(out, File{Path: p, Size: int64(len(data)), Digest: Digest(data)})
	}
	return out, nil
}
