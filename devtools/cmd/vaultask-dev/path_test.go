package main

import (
	"strings"
	"testing"
)

// A note's path is refused when it is not one LiveSync could store inside
// the vault, with what to write instead where there is an obvious fix.
func TestVaultPath(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"Inbox/From my phone.md", ""},
		{"", "empty"},
		{".", "leaves the vault"},
		{"..", "leaves the vault"},
		{"../x.md", "leaves the vault"},
		{"/etc/x.md", "relative"},
		{`Inbox\x.md`, "relative"},
		{"C:x.md", "relative"},
		{"Inbox//x.md", `did you mean "Inbox/x.md"`},
		{"Inbox/./x.md", `did you mean "Inbox/x.md"`},
	} {
		got, err := vaultPath(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.in):
			t.Errorf("vaultPath(%q) = %q, %v; want it unchanged", tc.in, got, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("vaultPath(%q): %v, want an error saying %q", tc.in, err, tc.err)
		}
	}
}
