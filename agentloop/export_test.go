package agentloop

// StateKeys exposes stateKeys to the external tests, which check them
// against package provider's (an internal test cannot import provider).
var StateKeys = stateKeys
