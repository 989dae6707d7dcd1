package lsp

// Spec describes one language server: how to start it, the files it
// serves and the markers of a project's root.
type Spec struct {
	// Name names the server in notes and logs ("gopls").
	Name string
	// Command is the program and its arguments; a program without a
	// slash is looked up on PATH when a file of its languages is first
	// touched.
	Command []string
	// Env is added to the server's environment.
	Env []string
	// Languages maps a file extension, with its dot (".go"), or a whole
	// file name ("go.mod"), to the LSP language identifier sent for it.
	Languages map[string]string
	// RootMarkers are files or folders whose presence makes a folder a
	// project root ("go.mod"); the nearest folder above a file that holds
	// one, inside the workspace, is the server's root. With none found,
	// the workspace itself is.
	RootMarkers []string
	// InitializationOptions are sent in initialize.
	InitializationOptions any
	// Settings answer the server's workspace/configuration requests: the
	// value at each requested section (dotted path), or null.
	Settings map[string]any
}

// Catalog returns the built-in servers: gopls, pyright, typescript-language-server,
// rust-analyzer and clangd. Callers may change the returned slice.
func Catalog() []Spec {
	return []Spec{
		{
			Name: "gopls", Command: []string{"gopls"},
			Languages:   map[string]string{".go": "go", "go.mod": "go.mod", "go.work": "go.work"},
			RootMarkers: []string{"go.work", "go.mod"},
		},
		{
			Name: "pyright", Command: []string{"pyright-langserver", "--stdio"},
			Languages:   map[string]string{".py": "python", ".pyi": "python"},
			RootMarkers: []string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
			Settings:    map[string]any{"python": map[string]any{"analysis": map[string]any{"diagnosticMode": "openFilesOnly"}}},
		},
		{
			Name: "typescript-language-server", Command: []string{"typescript-language-server", "--stdio"},
			Languages: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
				".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"},
			RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"},
		},
		{
			Name: "rust-analyzer", Command: []string{"rust-analyzer"},
			Languages:   map[string]string{".rs": "rust"},
			RootMarkers: []string{"Cargo.toml", "rust-project.json"},
		},
		{
			Name: "clangd", Command: []string{"clangd", "--background-index=false"},
			Languages: map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
				".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp"},
			RootMarkers: []string{"compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt"},
		},
	}
}
