package codetools

// The JSON Schema pieces the tools' definitions are written with.

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
