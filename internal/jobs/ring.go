package jobs

// ring keeps the latest max bytes written, addressed by their offset in
// the whole output: the byte at offset o (total-len(buf) <= o < total) is
// at buf[o%max]. It grows as written, up to max, so an idle job holds
// little.
type ring struct {
	buf   []byte
	max   int
	total int64 // bytes written in all
}

func newRing(max int) *ring { return &ring{max: max} }

// write keeps p, dropping the oldest bytes beyond max.
func (r *ring) write(p []byte) {
	if len(p) >= r.max { // only its last max bytes stay, each at its offset
		r.total += int64(len(p))
		p = p[len(p)-r.max:]
		if len(r.buf) < r.max {
			r.buf = make([]byte, r.max)
		}
		at := int(r.total % int64(r.max)) // where the oldest kept byte goes
		n := copy(r.buf[at:], p)
		copy(r.buf, p[n:])
		return
	}
	for len(p) > 0 {
		if len(r.buf) < r.max { // still growing: total == len(buf)
			n := min(len(p), r.max-len(r.buf))
			r.buf = append(r.buf, p[:n]...)
			r.total += int64(n)
			p = p[n:]
			continue
		}
		at := int(r.total % int64(r.max))
		n := copy(r.buf[at:], p)
		r.total += int64(n)
		p = p[n:]
	}
}

// since returns a copy of the bytes from offset off on, and how many of
// them are no longer held (dropped from memory).
func (r *ring) since(off int64) (data []byte, dropped int64) {
	first := r.total - int64(len(r.buf))
	if off < first {
		dropped, off = first-off, first
	}
	if off >= r.total {
		return nil, dropped
	}
	n := int(r.total - off)
	data = make([]byte, n)
	at := int(off % int64(r.max))
	k := copy(data, r.buf[at:min(len(r.buf), at+n)])
	copy(data[k:], r.buf[:n-k])
	return data, dropped
}
