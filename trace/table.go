package trace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultTable is the table traces live in unless [WithTable] or [WithTableFrom]
// names another. It is unqualified: on PostgreSQL the connection's
// search_path finds it; on SQLite the main database holds it, and an
// unqualified name is always addressed as main.NAME, never as the table of
// an attached database.
const DefaultTable = "tool_traces"

// MaxIdentifierBytes is the longest schema or table name accepted:
// PostgreSQL's limit, beyond which it would silently cut the name (and two
// long names could meet in one table).
const MaxIdentifierBytes = 63

// ErrInvalidTable is wrapped by the error for a table name that is not an
// identifier, optionally after a schema (an identifier) and one dot. An
// identifier is ASCII letters, digits and underscores, not starting with a
// digit, of 1 to [MaxIdentifierBytes] bytes.
var ErrInvalidTable = errors.New("trace: invalid table name")

// WithTable names the table traces are written to ([Record]), created in
// ([Migrate]) and read from ([List]): a table name ("audit_traces"), or a
// schema and a table name joined by a dot ("tenant_42.tool_traces" on
// PostgreSQL; on SQLite, "aux.tool_traces" is the table of the attached
// database aux, which must then be attached on every connection of the
// pool). The default is [DefaultTable].
//
// Names are used exactly as written and always quoted, so that a name can
// never become SQL; on PostgreSQL, capitals therefore matter ("Tenant_42" is
// not tenant_42). SQLite ignores case in names: there a name that differs
// from an existing table's only by case is refused with ErrInvalidTable
// (by Migrate, and by a Recorder before the tool runs) instead of sharing
// that table. A name that is not valid (see [ErrInvalidTable]) makes
// Migrate and List fail, and makes a Recorder refuse every call before the
// tool runs (with [WithBestEffort]: run it and drop its row), with an error
// wrapping ErrInvalidTable; check a name from outside with [ValidateTable]
// first. WithTable replaces an earlier [WithTableFrom].
func WithTable(name string) Option {
	return func(c *config) { c.table, c.tableNamed, c.tableFrom = name, true, nil }
}

// WithTableFrom picks the table of each call from its context, so that one
// [Recorder] (and one connection pool) serves many tenants, each in a schema
// or table of its own: fn returns a name as [WithTable] takes it, for example
// "tenant_42.tool_traces" for the tenant found in the context. A call whose
// table cannot be chosen (fn returns an error, panics, or returns an invalid
// name) is refused before the tool runs, with an error wrapping fn's error
// or [ErrInvalidTable] (with [WithBestEffort]: it runs and its row is dropped);
// it is counted in [Recorder.Stats] and logged. [List] given WithTableFrom reads
// the table fn picks for its context; [Migrate] needs [WithTable]. fn may be
// called from many goroutines at once. A nil fn means [DefaultTable].
// WithTableFrom replaces an earlier WithTable.
//
// Each table has its own prepared statements: with many tenants, bound
// gorm's cache of them (gorm.Config.PrepareStmtMaxSize).
func WithTableFrom(fn func(ctx context.Context) (string, error)) Option {
	return func(c *config) { c.table, c.tableNamed, c.tableFrom = "", false, fn }
}

// ValidateTable returns nil if name can be given to [WithTable], else an
// error wrapping [ErrInvalidTable] that says what is wrong.
func ValidateTable(name string) error {
	_, err := parseTable("", name)
	return err
}

// table is a validated table name.
type table struct {
	schema string // "" when unqualified
	name   string
}

// defaultTable is [DefaultTable], parsed.
var defaultTable = table{name: DefaultTable}

// String returns the name as given: "schema.name" or "name".
func (t table) String() string {
	if t.schema == "" {
		return t.name
	}
	return t.schema + "." + t.name
}

// isDefault reports whether t is the unqualified [DefaultTable].
func (t table) isDefault() bool { return t == defaultTable }

// on returns t as the database named dialect must be told it: on SQLite an
// unqualified name is the main database's, written main.NAME, since SQLite
// would otherwise resolve it through the attached databases too (a
// tenant's table when main has none).
func (t table) on(dialect string) table {
	if dialect == "sqlite" && t.schema == "" {
		t.schema = "main"
	}
	return t
}

// parseTable validates s, given as arg (named in the error, if not ""), as
// "name" or "schema.name".
func parseTable(arg, s string) (table, error) {
	fail := func(format string, a ...any) (table, error) {
		given := ""
		if arg != "" {
			given = " given to " + arg
		}
		return table{}, fmt.Errorf("%w %q%s: %s (write a table as name or schema.name: letters, digits and _, not starting with a digit, at most %d bytes each, e.g. tenant_42.tool_traces)",
			ErrInvalidTable, s, given, fmt.Sprintf(format, a...), MaxIdentifierBytes)
	}
	if s == "" {
		return fail("it is empty")
	}
	var t table
	switch parts := strings.Split(s, "."); len(parts) {
	case 1:
		t.name = parts[0]
	case 2:
		t.schema, t.name = parts[0], parts[1]
		if t.schema == "" {
			return fail("the schema before the dot is empty")
		}
	default:
		return fail("it has %d dots; at most one may join a schema and a table", len(parts)-1)
	}
	if t.name == "" {
		return fail("the table name after the dot is empty")
	}
	for _, part := range []string{t.schema, t.name} {
		if part == "" {
			continue
		}
		if msg := checkIdentifier(part); msg != "" {
			return fail("%s", msg)
		}
	}
	return t, nil
}

// checkIdentifier says what is wrong with the identifier id (not empty),
// or returns "".
func checkIdentifier(id string) string {
	for i := 0; i < len(id); i++ {
		b := id[i]
		switch {
		case b == '_', b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z':
		case b >= '0' && b <= '9':
			if i == 0 {
				return fmt.Sprintf("%q starts with a digit", id)
			}
		default:
			r, _ := utf8.DecodeRuneInString(id[i:])
			return fmt.Sprintf("the character %q (byte %d of %q) is not allowed", r, i, id)
		}
	}
	if len(id) > MaxIdentifierBytes {
		return fmt.Sprintf("%q is %d bytes long", id[:16]+"…", len(id))
	}
	return ""
}

// derived returns the name of an object that belongs to t (an index, a
// trigger, a function): t's name, "_" and suffix, as for the default table
// ("tool_traces_tool_name_index"). A name longer than MaxIdentifierBytes is
// shortened and given a hash of t's name, so that the database never cuts
// it and two tables never share it.
func (t table) derived(suffix string) string {
	n := t.name + "_" + suffix
	if len(n) <= MaxIdentifierBytes {
		return n
	}
	sum := sha256.Sum256([]byte(t.name))
	h := hex.EncodeToString(sum[:4])
	keep := max(MaxIdentifierBytes-len(suffix)-len(h)-2, 0)
	return t.name[:min(keep, len(t.name))] + "_" + h + "_" + suffix
}

// staticTable is the table named by WithTable, or the default.
func (c *config) staticTable() (table, error) {
	if !c.tableNamed {
		return defaultTable, nil
	}
	return parseTable("trace.WithTable", c.table)
}

// chooseTable returns the table of a call made with ctx: WithTableFrom's pick,
// else static (with its error staticErr).
func (c *config) chooseTable(ctx context.Context, static table, staticErr error) (t table, err error) {
	if c.tableFrom == nil {
		return static, staticErr
	}
	defer func() {
		if v := recover(); v != nil {
			t, err = table{}, fmt.Errorf("trace: the function given to trace.WithTableFrom panicked: %v", v)
		}
	}()
	name, err := c.tableFrom(ctx)
	if err != nil {
		return table{}, fmt.Errorf("trace: the function given to trace.WithTableFrom could not choose the table: %w", err)
	}
	return parseTable("trace.WithTableFrom", name)
}
