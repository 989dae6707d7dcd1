// Package llmtoolkittest provides fakes for unit tests of code that uses
// llmtoolkit: a recording [Fake] resolver with canned answers, so that an
// agent loop or a host can be tested without real tools, and a
// [ScriptedModel] that answers an agent loop from a script, so that it can
// be tested without a real model.
package llmtoolkittest
