package codetools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// schemaObject returns a JSON Schema object with these properties.
func schemaObject(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// pathProperty is the schema of a path argument.
func pathProperty(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

// fileError turns an error from os.Root into a message for the model.
func fileError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("File not found: %s", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("Permission denied: %s", p)
	case isEscape(err):
		return fmt.Errorf("path %q is %w (through a symbolic link)", p, ErrOutsideRoot)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// isEscape reports an os.Root refusal: a path or link that leaves the root.
func isEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error() == "path escapes from parent"
	}
	return false
}

// slashPath shows a root-relative path the way the tools print paths.
func slashPath(rel string) string { return filepath.ToSlash(rel) }
