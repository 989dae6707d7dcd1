package llmtoolkit

import (
	"reflect"
	"slices"
	"sync"
)

// ObservedTools lists a wrapped resolver's definitions with one [Observer]
// added to each. It is what a wrapper that must see every call of the tools
// it lists returns from its Tools and LookupTool: trace.Recorder and
// otelkit.Resolver use it, and so can a wrapper of yours.
//
// It reads the wrapped resolver afresh on every call, so it is never stale
// when that resolver's tools change (an MCP client after Refresh, a
// permission guard after a mode switch, a tool whose schema was replaced),
// and it reuses each observed copy while the wrapped definition is the same
// one, so steady use allocates nothing. It is safe for concurrent use.
type ObservedTools struct {
	r  Resolver
	ob Observer

	mu     sync.RWMutex
	src    []Tool                  // the list last read from r, as r returned it
	list   []Tool                  // its observed copies, first of each name
	byName map[string]observedTool // the last definition seen of each name
}

// observedTool is a wrapped definition and its observed copy.
type observedTool struct {
	src, observed Tool
}

// NewObservedTools returns the observed view of r's tools, ob added to each
// definition's [Tool.Observers]. r may be nil: it lists nothing.
func NewObservedTools(r Resolver, ob Observer) *ObservedTools {
	return &ObservedTools{r: r, ob: ob, byName: map[string]observedTool{}}
}

// Tools lists the wrapped resolver's tools as it lists them now (the first
// of each name), each with the observer among its observers. The slice is
// shared: do not modify it.
func (o *ObservedTools) Tools() []Tool {
	if o.r == nil {
		return nil
	}
	src := o.r.Tools()
	o.mu.RLock()
	same, list := sameSlice(src, o.src), o.list
	o.mu.RUnlock()
	if same {
		return list
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	list = make([]Tool, 0, len(src))
	seen := make(map[string]bool, len(src))
	for _, t := range src {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		list = append(list, o.observedLocked(t))
	}
	o.src, o.list = src, list
	return list
}

// LookupTool finds the wrapped resolver's definition of name as it is now,
// with the observer among its observers.
func (o *ObservedTools) LookupTool(name string) (Tool, bool) {
	def, ok := o.Inner(name)
	if !ok {
		return Tool{}, false
	}
	o.mu.RLock()
	e, hit := o.byName[name]
	o.mu.RUnlock()
	if hit && sameDefinition(e.src, def) {
		return e.observed, true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.observedLocked(def), true
}

// Inner finds the wrapped resolver's own definition of name (without the
// observer): through its LookupTool when it has one, else in its list.
func (o *ObservedTools) Inner(name string) (Tool, bool) { return FindTool(o.r, name) }

// observedLocked returns the observed copy of t, reusing the one made for
// the same definition. o.mu is held for writing.
func (o *ObservedTools) observedLocked(t Tool) Tool {
	if e, ok := o.byName[t.Name]; ok && sameDefinition(e.src, t) {
		return e.observed
	}
	obs := t
	obs.Observers = append(slices.Clip(t.Observers), o.ob)
	o.byName[t.Name] = observedTool{src: t, observed: obs}
	return obs
}

// sameSlice reports whether a and b are the same slice (same array, same
// length), not merely equal.
func sameSlice(a, b []Tool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameDefinition reports whether a and b are copies of one definition:
// equal strings, and the same maps, slices and functions (by identity, so
// a replaced schema or a new observer is a new definition).
func sameDefinition(a, b Tool) bool {
	return a.Name == b.Name && a.Description == b.Description &&
		a.Annotations == b.Annotations && a.schema == b.schema &&
		samePointer(a.Parameters, b.Parameters) && samePointer(a.Metadata, b.Metadata) &&
		samePointer(a.Recipe, b.Recipe) &&
		len(a.SensitiveFields) == len(b.SensitiveFields) && (len(a.SensitiveFields) == 0 || &a.SensitiveFields[0] == &b.SensitiveFields[0]) &&
		len(a.Observers) == len(b.Observers) && (len(a.Observers) == 0 || &a.Observers[0] == &b.Observers[0])
}

// samePointer reports whether two maps or two functions of one type are the
// same one (both nil included).
func samePointer[T any](a, b T) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
