package web

import (
	"context"
	"strings"

	"golang.org/x/net/html"
)

// Text returns the text of an HTML document: tags stripped, script and
// style dropped, blank runs collapsed. It stops when ctx ends.
func Text(ctx context.Context, page string) (string, error) {
	z := html.NewTokenizer(strings.NewReader(page))
	var b strings.Builder
	skip := 0
	for tokens := 1; ; tokens++ {
		if tokens%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return collapseBlankLines(b.String()), nil
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			tag := string(name)
			start := tt == html.StartTagToken
			switch tag {
			case "script", "style", "noscript", "template", "svg":
				if start {
					skip++
				} else if skip > 0 {
					skip--
				}
			case "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "article", "header", "footer", "table", "ul", "ol", "blockquote":
				b.WriteByte('\n')
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		}
	}
}

// collapseBlankLines squeezes the blanks of each line and keeps at most
// one blank line in a row.
func collapseBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := 0
	for _, l := range lines {
		l = strings.TrimSpace(strings.Join(strings.Fields(l), " "))
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
