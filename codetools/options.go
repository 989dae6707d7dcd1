package codetools

// Option configures [New].
type Option func(*config)

// config holds every limit and switch of the tools. Each tool's file adds
// the fields it needs, with their defaults in defaultConfig.
type config struct {
}

func defaultConfig() config {
	return config{}
}
