package snapshot

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
)

const linksMagic = "llmtoolkit-links-1\n"

// EncodeLinks encodes hard-link groups (each the root-relative paths of
// one file with several names) in a canonical form: paths sorted in each
// group, groups by their first path, every path length-prefixed.
func EncodeLinks(groups [][]string) []byte {
	gs := make([][]string, 0, len(groups))
	for _, g := range groups {
		g = slices.Clone(g)
		sort.Strings(g)
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i][0] < gs[j][0] })
	b := append([]byte(nil), linksMagic...)
	b = binary.AppendUvarint(b, uint64(len(gs)))
	for _, g := range gs {
		b = binary.AppendUvarint(b, uint64(len(g)))
		for _, p := range g {
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
	}
	return b
}

// ReadLinks returns the hard-link groups of the blob h ([Snapshot.Links]).
func ReadLinks(ctx context.Context, b Blobs, h Hash) ([][]string, error) {
	data, err := b.Get(ctx, h)
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("%w (the hard links %s)", errBadTree, h)
	if Sum(data) != h {
		return nil, bad
	}
	rest, ok := strings.CutPrefix(string(data), linksMagic)
	if !ok {
		return nil, bad
	}
	d := decoder{b: []byte(rest)}
	n := d.uvarint()
	if n > maxTreeEntries {
		return nil, bad
	}
	groups := make([][]string, 0, min(n, 1024))
	for i := uint64(0); i < n && d.err == nil; i++ {
		m := d.uvarint()
		if m < 2 || m > maxTreeEntries {
			return nil, bad
		}
		g := make([]string, 0, min(m, 1024))
		for j := uint64(0); j < m && d.err == nil; j++ {
			p := d.str()
			for _, el := range strings.Split(p, "/") {
				if el == "" || el == "." || el == ".." || strings.ContainsRune(el, 0) {
					return nil, bad
				}
			}
			g = append(g, p)
		}
		groups = append(groups, g)
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, bad
	}
	return groups, nil
}

// lookup returns the entry at the root-relative path p of the tree h.
func lookup(ctx context.Context, b Blobs, h Hash, p string) (Entry, bool, error) {
	parts := strings.Split(p, "/")
	for i, name := range parts {
		entries, err := ReadTree(ctx, b, h)
		if err != nil {
			return Entry{}, false, err
		}
		k, found := sort.Find(len(entries), func(j int) int { return strings.Compare(name, entries[j].Name) })
		if !found {
			return Entry{}, false, nil
		}
		if i == len(parts)-1 {
			return entries[k], true, nil
		}
		if entries[k].Kind != KindDir {
			return Entry{}, false, nil
		}
		h = entries[k].Hash
	}
	return Entry{}, false, nil
}

// groupKeys maps every path of groups to its group's key (its sorted
// paths, joined).
func groupKeys(groups [][]string) map[string]string {
	out := map[string]string{}
	for _, g := range groups {
		g = slices.Clone(g)
		sort.Strings(g)
		key := strings.Join(g, "\x00")
		for _, p := range g {
			out[p] = key
		}
	}
	return out
}
