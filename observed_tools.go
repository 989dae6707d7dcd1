package llmtoolkit

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ObservedTools lists a wrapped resolver's definitions with one [Observer]
// added to each. It is what a wrapper that must see every call of the tools
// it lists returns from its Tools and LookupTool: trace.Recorder and
// otelkit.Resolver use it, and so can a wrapper of yours.
//
// Its Tools reads the wrapped resolver's list afresh on every call, so the
// list is never stale when that resolver's tools change (an MCP client
// after Refresh, a permission guard after a mode switch, a tool whose
// schema was replaced); agentloop calls Tools every iteration. LookupTool
// answers from the list last read, as fast as a map lookup, and asks the
// wrapped resolver only for a name that list does not hold (an unlisted
// recipe step, or a tool added since). Each observed copy is reused while
// the wrapped definition is the same one, so steady use allocates nothing.
// It is safe for concurrent use.
type ObservedTools struct {
	r  Resolver
	ob Observer

	mu   sync.Mutex // serialises writers of snap
	snap atomic.Pointer[observedSnapshot]
}

// observedSnapshot is what an ObservedTools has seen; it is never modified
// once published (copy on write), so readers need no lock.
type observedSnapshot struct {
	src    []Tool                  // the list last read from r, as r returned it
	list   []Tool                  // its observed copies, first of each name
	listed map[string]int          // the index in list of each name
	byName map[string]observedTool // the last definition seen of each name
}

// observedTool is a wrapped definition and its observed copy.
type observedTool struct {
	src, observed Tool
}

// NewObservedTools returns the observed view of r's tools, ob added to each
// definition's [Tool.Observers], having read r's list once. r may be nil:
// it lists nothing.
func NewObservedTools(r Resolver, ob Observer) *ObservedTools {
	o := &ObservedTools{r: r, ob: ob}
	o.snap.Store(&observedSnapshot{byName: map[string]observedTool{}})
	o.Tools() // the first list, so that LookupTool is fast from the start
	return o
}

// Tools lists the wrapped resolver's tools as it lists them now (the first
// of each name), each with the observer among its observers. The slice is
// shared: do not modify it.
func (o *ObservedTools) Tools() []Tool {
	if o.r == nil {
		return nil
	}
	src := o.r.Tools()
	// the same list, or a new slice of the same definitions (a resolver
	// that builds its list on every call)
	if snap := o.snap.Load(); sameSlice(src, snap.src) || slices.EqualFunc(src, snap.src, sameDefinition) {
		return snap.list
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.snap.Load()
	next := &observedSnapshot{src: src, list: make([]Tool, 0, len(src)),
		listed: make(map[string]int, len(src)), byName: maps.Clone(old.byName)}
	for _, t := range src {
		if _, dup := next.listed[t.Name]; dup {
			continue
		}
		next.listed[t.Name] = len(next.list)
		next.list = append(next.list, o.observed(next.byName, t))
	}
	o.snap.Store(next)
	return next.list
}

// LookupTool finds the wrapped resolver's definition of name, with the
// observer among its observers: the one in the list Tools last read, else
// the one the wrapped resolver finds now.
func (o *ObservedTools) LookupTool(name string) (Tool, bool) {
	snap := o.snap.Load()
	if i, ok := snap.listed[name]; ok {
		return snap.list[i], true
	}
	def, ok := o.inner(name)
	if !ok {
		return Tool{}, false
	}
	if e, hit := snap.byName[name]; hit && sameDefinition(e.src, def) {
		return e.observed, true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	old := o.snap.Load()
	if e, hit := old.byName[name]; hit && sameDefinition(e.src, def) {
		return e.observed, true
	}
	next := &observedSnapshot{src: old.src, list: old.list, listed: old.listed, byName: maps.Clone(old.byName)}
	obs := o.observed(next.byName, def)
	o.snap.Store(next)
	return obs, true
}

// inner finds the wrapped resolver's own definition of name (without the
// observer).
func (o *ObservedTools) inner(name string) (Tool, bool) { return FindTool(o.r, name) }

// Seen returns the wrapped resolver's definition of name as LookupTool
// gives it (without the observer): a wrapper's Resolve reads the call's
// facts from it, the definition the call was checked against.
func (o *ObservedTools) Seen(name string) (Tool, bool) {
	if e, ok := o.snap.Load().byName[name]; ok {
		return e.src, true
	}
	return o.inner(name)
}

// observed returns the observed copy of t, reusing the one in byName made
// for the same definition, else making it and putting it in byName (a map
// not yet published).
func (o *ObservedTools) observed(byName map[string]observedTool, t Tool) Tool {
	if e, ok := byName[t.Name]; ok && sameDefinition(e.src, t) {
		return e.observed
	}
	obs := t
	obs.Observers = append(slices.Clip(t.Observers), o.ob)
	byName[t.Name] = observedTool{src: t, observed: obs}
	return obs
}

// sameSlice reports whether a and b are the same slice (same array, same
// length), not merely equal.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameDefinition reports whether a and b are copies of one definition:
// equal strings, and the same maps, slices and functions (by identity, so
// a replaced schema or a new observer is a new definition).
func sameDefinition(a, b Tool) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		a.Annotations == b.Annotations && a.schema == b.schema &&
		samePointer(&a.Parameters, &b.Parameters) && samePointer(&a.Metadata, &b.Metadata) &&
		samePointer(&a.Recipe, &b.Recipe) && a.Paths == b.Paths && a.Commands == b.Commands &&
		sameSlice(a.SensitiveFields, b.SensitiveFields) && sameSlice(a.Observers, b.Observers) &&
		sameSlice(a.Gates, b.Gates) && a.Deferred == b.Deferred && a.Native == b.Native
}

// samePointer reports whether the maps or functions a and b point to are
// the same one (both nil included). Maps and funcs are one pointer wide.
func samePointer[T map[string]any | Recipe](a, b *T) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(a)) == *(*unsafe.Pointer)(unsafe.Pointer(b))
}
