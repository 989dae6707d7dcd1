package textutil

// CanonicalUUID reports whether s is a UUID in its canonical form: 36
// characters, lower-case hex, dashes at 8, 13, 18 and 23 (the form both
// trace databases give back, and the form uuid.Parse then String return
// unchanged).
func CanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
