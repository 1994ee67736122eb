package mcp

import "testing"

func TestMCPInstructionsFitClaudeCode(t *testing.T) {
	if n := len(instructions); n >= 2048 {
		t.Fatalf("MCP instructions are %d bytes; Claude Code truncates them at 2 KB", n)
	}
}
