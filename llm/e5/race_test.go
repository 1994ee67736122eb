//go:build race

package e5

const raceEnabled = true
