package patch

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// refCase is one case of the differential corpus: a tree (paths ending in
// "/" are empty folders) and a patch.
type refCase struct {
	Name  string            `json:"name"`
	Kind  string            `json:"kind"`
	Files map[string]string `json:"files"`
	Dirs  []string          `json:"dirs"`
	Patch string            `json:"patch"`
}

// corpus generates the differential corpus, the same every run: ordinary
// patches (updates, adds, deletes, moves, several files at once) and
// hostile ones (contexts and anchors that match twice, a move onto an
// existing file, a delete of a folder, CRLF and BOM files, whitespace the
// patch does not have, contexts not found, escapes, malformed patches).
func corpus() []refCase {
	g := &gen{r: rand.New(rand.NewPCG(49, 4))}
	var cases []refCase
	add := func(kind string, n int, f func(i int) refCase) {
		for i := range n {
			c := f(i)
			c.Kind = kind
			c.Name = fmt.Sprintf("%s-%02d", kind, i)
			cases = append(cases, c)
		}
	}
	add("update", 40, func(int) refCase {
		lines := g.lines(30 + g.r.IntN(90))
		return refCase{Files: map[string]string{"src/main.go": join(lines, "\n")}, Patch: wrap(g.update("src/main.go", lines, 1+g.r.IntN(4), g.r.IntN(3) == 0))}
	})
	add("add", 15, func(i int) refCase {
		return refCase{Files: map[string]string{"keep.txt": "k\n"}, Patch: wrap(g.addOp(fmt.Sprintf("new/%d/file%d.txt", i%3, i), g.lines(1+g.r.IntN(10))))}
	})
	add("delete", 10, func(i int) refCase {
		return refCase{Files: map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"}, Patch: wrap("*** Delete File: " + []string{"a.txt", "d/b.txt"}[i%2] + "\n")}
	})
	add("move", 15, func(i int) refCase {
		lines := g.lines(20 + g.r.IntN(40))
		op := g.update("old/name.go", lines, g.r.IntN(3), false)
		op = strings.Replace(op, "\n", "\n*** Move to: "+[]string{"new/name.go", "name.go", "a/b/c/name.go"}[i%3]+"\n", 1)
		return refCase{Files: map[string]string{"old/name.go": join(lines, "\n")}, Patch: wrap(op)}
	})
	add("multi", 20, func(i int) refCase {
		a, b := g.lines(25), g.lines(40)
		ops := g.update("a.go", a, 2, false) + g.addOp("pkg/new.go", g.lines(5)) + "*** Delete File: gone.txt\n" + g.update("b.go", b, 3, true)
		return refCase{Files: map[string]string{"a.go": join(a, "\n"), "b.go": join(b, "\n"), "gone.txt": "x\n"}, Patch: wrap(ops)}
	})
	add("twice", 20, func(i int) refCase {
		block := []string{"if err != nil {", "\treturn err", "}"}
		var lines []string
		for k := range 3 {
			lines = append(lines, fmt.Sprintf("func step%d() error {", k), "\terr := run()")
			lines = append(lines, block...)
			lines = append(lines, "\treturn nil", "}")
		}
		var h string
		switch i % 4 {
		case 0: // context that occurs three times: the first wins
			h = "@@\n if err != nil {\n-\treturn err\n+\treturn fmt.Errorf(\"wrap: %w\", err)\n }\n"
		case 1: // an anchor picks the second
			h = "@@ func step1() error {\n if err != nil {\n-\treturn err\n+\treturn nil\n }\n"
		case 2: // two hunks with the same context: the second after the first
			h = "@@\n if err != nil {\n-\treturn err\n+\treturn e1\n@@\n if err != nil {\n-\treturn err\n+\treturn e2\n"
		case 3: // an anchor that itself occurs twice
			h = "@@ \terr := run()\n@@ \terr := run()\n if err != nil {\n-\treturn err\n+\treturn x\n"
		}
		return refCase{Files: map[string]string{"twice.go": join(lines, "\n")}, Patch: wrap("*** Update File: twice.go\n" + h)}
	})
	add("move-onto-existing", 10, func(i int) refCase {
		files := map[string]string{"src.txt": "one\ntwo\n", "dst.txt": "taken\n"}
		op := "*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-one\n+ONE\n"
		if i%2 == 1 {
			op = "*** Delete File: dst.txt\n" + op // replaced on purpose: both apply it
		}
		return refCase{Files: files, Patch: wrap(op)}
	})
	add("delete-folder", 10, func(i int) refCase {
		return refCase{Files: map[string]string{"dir/f.txt": "f\n", "a.txt": "a\n"}, Dirs: []string{"empty"},
			Patch: wrap([]string{"*** Delete File: dir\n", "*** Delete File: empty\n", "*** Delete File: a.txt\n*** Delete File: dir/\n"}[i%3])}
	})
	add("crlf", 20, func(i int) refCase {
		lines := g.lines(20 + g.r.IntN(30))
		content := join(lines, "\r\n")
		if i%5 == 4 { // mixed: one LF line among CRLFs
			content = strings.Replace(content, "\r\n", "\n", 1)
		}
		op := g.update("w.txt", lines, 1+g.r.IntN(3), false)
		if i%3 == 0 {
			op = strings.ReplaceAll(op, "\n", "\r\n") // the patch itself in CRLF
		}
		return refCase{Files: map[string]string{"w.txt": content}, Patch: wrap(op)}
	})
	add("whitespace", 15, func(i int) refCase {
		lines := g.lines(30)
		file := make([]string, len(lines))
		for k, l := range lines {
			switch i % 3 {
			case 0:
				file[k] = l + "  "
			case 1:
				file[k] = "    " + strings.TrimLeft(l, "\t")
			default:
				file[k] = l + "\t"
			}
		}
		return refCase{Files: map[string]string{"ws.go": join(file, "\n")}, Patch: wrap(g.update("ws.go", lines, 1+g.r.IntN(2), false))}
	})
	add("eof", 10, func(i int) refCase {
		lines := g.lines(15 + i)
		n := len(lines)
		h := fmt.Sprintf("@@\n %s\n-%s\n+changed last\n+appended\n*** End of File\n", lines[n-2], lines[n-1])
		if i%2 == 1 { // the last lines also occur earlier
			lines = append(append([]string{}, lines[n-2:]...), lines...)
		}
		content := join(lines, "\n")
		if i%4 == 3 {
			content = strings.TrimSuffix(content, "\n")
		}
		return refCase{Files: map[string]string{"e.txt": content}, Patch: wrap("*** Update File: e.txt\n" + h)}
	})
	add("no-match", 15, func(i int) refCase {
		lines := g.lines(30)
		var h string
		switch i % 3 {
		case 0:
			h = "@@\n this line is not there\n-nor this\n+x\n"
		case 1: // hunks out of order
			h = fmt.Sprintf("@@\n-%s\n+x\n@@\n-%s\n+y\n", lines[20], lines[5])
		case 2: // the third file fails: nothing may be written
			return refCase{Files: map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
				Patch: wrap("*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: c.txt\n+c\n*** Update File: b.txt\n@@\n-zzz\n+B\n")}
		}
		return refCase{Files: map[string]string{"n.txt": join(lines, "\n")}, Patch: wrap("*** Update File: n.txt\n" + h)}
	})
	add("exists-missing", 10, func(i int) refCase {
		files := map[string]string{"here.txt": "here\n"}
		return refCase{Files: files, Patch: wrap([]string{
			"*** Add File: here.txt\n+again\n", "*** Update File: nothere.txt\n@@\n+x\n", "*** Delete File: nothere.txt\n",
			"*** Delete File: here.txt\n*** Add File: here.txt\n+again\n", "*** Delete File: here.txt\n*** Update File: here.txt\n@@\n-here\n+x\n",
		}[i%5])}
	})
	add("escape", 5, func(i int) refCase {
		return refCase{Files: map[string]string{"a.txt": "a\n"}, Patch: wrap([]string{
			"*** Add File: ../x.txt\n+x\n", "*** Update File: a.txt\n*** Move to: ../../a.txt\n@@\n-a\n+b\n", "*** Delete File: /etc/hostname\n",
			"*** Add File: sub/../../y.txt\n+y\n", "*** Update File: ./a.txt\n@@\n-a\n+b\n",
		}[i])}
	})
	add("lone-anchor", 5, func(i int) refCase {
		lines := g.lines(20)
		return refCase{Files: map[string]string{"l.txt": join(lines, "\n")},
			Patch: wrap(fmt.Sprintf("*** Update File: l.txt\n@@ no such line %d\n %s\n-%s\n+x\n", i, lines[3], lines[4]))}
	})
	add("bom", 5, func(i int) refCase {
		lines := g.lines(10)
		h := fmt.Sprintf("@@\n %s\n-%s\n+x\n", lines[4], lines[5])
		if i%2 == 1 { // the first line changes
			h = fmt.Sprintf("@@\n-%s\n+first\n %s\n", lines[0], lines[1])
		}
		return refCase{Files: map[string]string{"b.txt": "\uFEFF" + join(lines, "\n")}, Patch: wrap("*** Update File: b.txt\n" + h)}
	})
	add("syntax", 10, func(i int) refCase {
		return refCase{Files: map[string]string{"a.txt": "a\n"}, Patch: []string{
			"*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch\n",
			"*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n",
			"*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n?b\n*** End Patch\n",
			"*** Begin Patch\n*** Add File: b.txt\nno plus\n*** End Patch\n",
			"*** Begin Patch\n*** Delete File: a.txt\n-a\n*** End Patch\n",
			"*** Begin Patch\n*** Update File: a.txt\n*** End Patch\n",
			"*** Begin Patch\n*** Copy File: a.txt\n*** End Patch\n",
			"*** Begin Patch\n*** End Patch\n",
			"*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Unknown\n*** End Patch\n",
			"*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",
		}[i]}
	})
	return cases
}

// gen makes source-like lines and patches of them.
type gen struct{ r *rand.Rand }

var words = []string{"alpha", "beta", "gamma", "delta", "value", "count", "name", "err", "ctx", "buf"}

func (g *gen) lines(n int) []string {
	out := make([]string, n)
	for i := range out {
		w := words[g.r.IntN(len(words))]
		switch g.r.IntN(5) {
		case 0:
			out[i] = fmt.Sprintf("func %s%d() {", w, i)
		case 1:
			out[i] = fmt.Sprintf("\t%s := %d", w, i)
		case 2:
			out[i] = "}"
		case 3:
			out[i] = ""
		default:
			out[i] = fmt.Sprintf("\treturn %s + %d", w, i)
		}
	}
	return out
}

// update writes an Update File operation of hunks hunks over lines, each
// at a position after the previous one's end, with up to three lines of
// context; anchored adds an "@@ line" naming a line just above.
func (g *gen) update(p string, lines []string, hunks int, anchored bool) string {
	var b strings.Builder
	b.WriteString("*** Update File: " + p + "\n")
	pos := 0
	for h := 0; h < hunks; h++ {
		room := (len(lines) - pos) / (hunks - h)
		if room < 8 {
			break
		}
		at := pos + 4 + g.r.IntN(room-7) // first changed line
		if anchored && at-4 >= pos {
			fmt.Fprintf(&b, "@@ %s\n", lines[at-4])
		} else {
			b.WriteString("@@\n")
		}
		for i := max(pos, at-3); i < at; i++ {
			b.WriteString(" " + lines[i] + "\n")
		}
		del := g.r.IntN(3)
		for i := at; i < at+del && i < len(lines); i++ {
			b.WriteString("-" + lines[i] + "\n")
		}
		for k := range g.r.IntN(3) + boolInt(del == 0) {
			fmt.Fprintf(&b, "+\tadded %d.%d\n", h, k)
		}
		end := min(at+del+3, len(lines))
		for i := at + del; i < end; i++ {
			b.WriteString(" " + lines[i] + "\n")
		}
		pos = end
	}
	if pos == 0 { // no room for a hunk: change the first line
		b.WriteString("@@\n-" + lines[0] + "\n+\tfirst\n")
	}
	return b.String()
}

func (g *gen) addOp(p string, lines []string) string {
	var b strings.Builder
	b.WriteString("*** Add File: " + p + "\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func join(lines []string, eol string) string { return strings.Join(lines, eol) + eol }

func wrap(ops string) string { return "*** Begin Patch\n" + ops + "*** End Patch\n" }
