package textutil

import "strconv"

// HumanSize formats a byte count the way the tools report sizes: "512B",
// "50.0KB", "1.5MB", "2.0GB" (powers of 1024, one decimal above bytes).
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + "B"
	}
	units := []string{"KB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n) / unit
	i := 0
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
}
