package lsp

import "encoding/json"

// The few protocol types the client sends and reads (LSP 3.17), written by
// hand: field names as the specification spells them.

// Position is a zero-based line and UTF-16 character offset.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span of positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Severity of a diagnostic: 1 error, 2 warning, 3 information, 4 hint.
type Severity int

// The severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// String names the severity as the answers do.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error" // the specification: a client interprets a missing severity as it likes
}

// Diagnostic is one problem the server reports in a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity Severity        `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"` // a number or a string
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// CodeString returns the diagnostic's code as text ("" when it has none).
func (d Diagnostic) CodeString() string {
	if len(d.Code) == 0 || string(d.Code) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(d.Code, &s) == nil {
		return s
	}
	return string(d.Code)
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

// TextEdit replaces a range with new text.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is a rename's answer: edits per document, in either of
// the protocol's two forms.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage     `json:"documentChanges,omitempty"`
}

type textDocumentEdit struct {
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
	Kind         string                          `json:"kind"` // set for create, rename, delete: refused
}

// Symbol is a symbol of a document or of the workspace, flattened: its
// name, kind, container and where it is.
type Symbol struct {
	Name      string
	Kind      int
	Container string
	Location  Location
}

// documentSymbol is the hierarchical form of textDocument/documentSymbol.
type documentSymbol struct {
	Name           string           `json:"name"`
	Kind           int              `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []documentSymbol `json:"children"`
}

// symbolInformation is the flat form (and workspace/symbol's).
type symbolInformation struct {
	Name          string   `json:"name"`
	Kind          int      `json:"kind"`
	Location      Location `json:"location"`
	ContainerName string   `json:"containerName"`
}

// SymbolKindName names an LSP symbol kind.
func SymbolKindName(k int) string {
	names := [...]string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
		"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean",
		"array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}
	if k > 0 && k < len(names) {
		return names[k]
	}
	return "symbol"
}
