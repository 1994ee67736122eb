// Package fakeanthropic is an Anthropic Messages API on loopback for tests
// that drive Claude Code (ANTHROPIC_BASE_URL): the model costs money and
// needs the internet, so it is the one part faked, and it speaks the real
// wire protocol over real HTTP, POST /v1/messages with and without
// streaming (server-sent events: message_start, content blocks with text
// and input_json deltas, message_delta, message_stop). Each turn is a text
// or a tool_use block, as Turn decides from the conversation.
//
// It imports no package of this module; only tests use it.
package fakeanthropic
