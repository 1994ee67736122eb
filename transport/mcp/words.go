package mcp

import "fmt"

// nounCount is n of a thing in words, singular for one: "1 note",
// "0 notes", "3 topic notes".
func nounCount(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
