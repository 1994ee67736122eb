package main

import (
	"slices"
	"strings"
	"testing"
)

// The list flags take whole numbers at or above their floor, spaces and an
// empty list allowed, and name the flag and the value they refuse.
func TestCounts(t *testing.T) {
	for _, c := range []struct {
		list    string
		lowest  int
		want    []int
		wantErr string
	}{
		{"", 1, nil, ""},
		{"10000, 100000", 1, []int{10000, 100000}, ""},
		{"0,10", 0, []int{0, 10}, ""},
		{"0,10", 1, nil, `-x: "0" is not a whole number of at least 1`},
		{"10,ten", 0, nil, `-x: "ten" is not a whole number of at least 0`},
	} {
		got, err := counts("-x", c.list, c.lowest)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("counts(%q, %d) error %v, want %q", c.list, c.lowest, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("counts(%q, %d) = %v, %v; want %v", c.list, c.lowest, got, err, c.want)
		}
	}
}
