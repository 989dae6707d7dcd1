package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Hash names a blob: the SHA-256 of its bytes (a file's content, or a
// folder's encoded listing).
type Hash [32]byte

// String returns the hash in hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash (no blob).
func (h Hash) IsZero() bool { return h == Hash{} }

// ParseHash reads a hash written by [Hash.String].
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("snapshot: %q is not a SHA-256 hash in hex", s)
	}
	copy(h[:], b)
	return h, nil
}

// Sum returns the hash of data.
func Sum(data []byte) Hash { return sha256.Sum256(data) }

// Kind is the type of an entry of the tree.
type Kind uint8

// The kinds of entries a snapshot records.
const (
	KindFile Kind = iota + 1
	KindDir
	KindLink
	KindFIFO
	KindSocket
	KindCharDevice
	KindBlockDevice
)

// String names the kind as the diff shows it.
func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "folder"
	case KindLink:
		return "symbolic link"
	case KindFIFO:
		return "named pipe"
	case KindSocket:
		return "socket"
	case KindCharDevice:
		return "character device"
	case KindBlockDevice:
		return "block device"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Entry is one name of a folder as a snapshot records it.
type Entry struct {
	Name string
	Kind Kind
	// Mode holds the permission bits with setuid, setgid and sticky (07777).
	Mode uint32
	// Size is a file's size in bytes.
	Size int64
	// Hash is a file's content hash, or a folder's listing hash. For a
	// Huge file it is the hash of its data extents (or of its identity,
	// past the hashing bound), and no blob holds the content.
	Hash Hash
	// Huge marks a file over the size bound: recorded by hash and size
	// only, so a rewind cannot restore it.
	Huge bool
	// Target is a symbolic link's target, as written (never followed).
	Target string
	// Rdev is a device's number (recorded, never opened).
	Rdev uint64
	// Meta reports that the owner and modification time were recorded
	// (listings written before they were, format 1, have neither: a
	// restore leaves them as they are).
	Meta bool
	// UID and GID are the owner; Mtime the modification time, in
	// nanoseconds since 1970 (of a link itself, never its target).
	UID, GID uint32
	Mtime    int64
}

// same reports whether e and o record the same thing (name aside). The
// owner and time count only where both recorded them.
func (e Entry) same(o Entry) bool {
	return e.sameContent(o) && e.Mode == o.Mode && e.sameMeta(o)
}

// sameContent reports whether e and o hold the same thing (kind,
// content, target), whatever their mode, owner and time.
func (e Entry) sameContent(o Entry) bool {
	return e.Kind == o.Kind && e.Size == o.Size && e.Hash == o.Hash &&
		e.Huge == o.Huge && e.Target == o.Target && e.Rdev == o.Rdev
}

// sameMeta reports whether e and o have the same owner and time, or one
// of them recorded neither.
func (e Entry) sameMeta(o Entry) bool {
	return !e.Meta || !o.Meta || (e.UID == o.UID && e.GID == o.GID && e.Mtime == o.Mtime)
}

// The listing formats: 1 without owners and times, 2 with them. Listings
// of format 1 stay readable.
const (
	treeMagic1 = "llmtoolkit-tree-1\n"
	treeMagic  = "llmtoolkit-tree-2\n"
)

// maxTreeEntries bounds the entries one decoded listing may claim.
const maxTreeEntries = 1 << 22

// encodeTree encodes a folder's entries, sorted by name, in a binary form
// in which every name (newlines and all) is length-prefixed.
func encodeTree(entries []Entry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	size := len(treeMagic) + 8
	for _, e := range entries {
		size += len(e.Name) + len(e.Target) + 64
	}
	b := make([]byte, 0, size)
	b = append(b, treeMagic...)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		flags := byte(0)
		if e.Huge {
			flags |= 1
		}
		b = append(b, byte(e.Kind), flags)
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendUvarint(b, uint64(e.UID))
		b = binary.AppendUvarint(b, uint64(e.GID))
		b = binary.AppendVarint(b, e.Mtime)
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		switch e.Kind {
		case KindFile:
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = append(b, e.Hash[:]...)
		case KindDir:
			b = append(b, e.Hash[:]...)
		case KindLink:
			b = binary.AppendUvarint(b, uint64(len(e.Target)))
			b = append(b, e.Target...)
		case KindCharDevice, KindBlockDevice:
			b = binary.AppendUvarint(b, e.Rdev)
		}
	}
	return b
}

// errBadTree is wrapped by the error for a listing blob that does not
// decode.
var errBadTree = errors.New("snapshot: a folder listing in the store is damaged")

// decodeTree reads what encodeTree wrote (format 2) or an older version
// did (format 1), refusing anything else.
func decodeTree(b []byte) ([]Entry, error) {
	meta := true
	rest, ok := strings.CutPrefix(string(b), treeMagic)
	if !ok {
		if rest, ok = strings.CutPrefix(string(b), treeMagic1); !ok {
			return nil, errBadTree
		}
		meta = false
	}
	d := decoder{b: []byte(rest)}
	n := d.uvarint()
	if n > maxTreeEntries {
		return nil, errBadTree
	}
	entries := make([]Entry, 0, min(n, 4096))
	prev := ""
	for i := uint64(0); i < n && d.err == nil; i++ {
		var e Entry
		e.Kind = Kind(d.byte())
		flags := d.byte()
		e.Huge = flags&1 != 0
		e.Mode = uint32(d.uvarint())
		if meta {
			e.Meta = true
			uid, gid := d.uvarint(), d.uvarint()
			if uid > 1<<32-1 || gid > 1<<32-1 {
				d.err = errBadTree
			}
			e.UID, e.GID = uint32(uid), uint32(gid)
			e.Mtime = d.varint()
		}
		e.Name = d.str()
		switch e.Kind {
		case KindFile:
			e.Size = int64(d.uvarint())
			e.Hash = d.hash()
		case KindDir:
			e.Hash = d.hash()
		case KindLink:
			e.Target = d.str()
		case KindCharDevice, KindBlockDevice:
			e.Rdev = d.uvarint()
		case KindFIFO, KindSocket:
		default:
			d.err = errBadTree
		}
		if d.err == nil && (e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") || (i > 0 && e.Name <= prev) || e.Size < 0) {
			d.err = errBadTree
		}
		prev = e.Name
		entries = append(entries, e)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadTree
	}
	return entries, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errBadTree
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errBadTree
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errBadTree
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errBadTree
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) hash() Hash {
	var h Hash
	if d.err != nil || len(d.b) < len(h) {
		d.err = errBadTree
		return h
	}
	copy(h[:], d.b)
	d.b = d.b[len(h):]
	return h
}
