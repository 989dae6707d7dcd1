package codetools

// Option configures [New].
type Option func(*config)

// config holds every limit and switch of the tools. Each tool's file adds
// the fields it needs, with their defaults in defaultConfig.
type config struct {
	part2 part2Config // bash, grep, glob, http_get: options_part2.go
}

func defaultConfig() config {
	return config{
		part2: defaultPart2Config(),
	}
}
