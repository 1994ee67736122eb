package index

import (
	"slices"
	"testing"
)

// A write that commits between a walk's lookup and its store clears the
// cache; the walk's members, read before the write, are not remembered
// (and storing them must not panic on the emptied cache).
func TestMemberCacheClearedBetweenLookupAndStore(t *testing.T) {
	var c memberCache
	_, missing := c.lookup(7, []string{"topic"}, false)
	if !slices.Equal(missing, []string{"topic"}) {
		t.Fatalf("missing = %v on an empty cache, want [topic]", missing)
	}
	c.clear()
	c.store(7, map[string][]string{"topic": {"a", "b"}}, false)
	found, missing := c.lookup(7, []string{"topic"}, false)
	if len(found) != 0 || !slices.Equal(missing, []string{"topic"}) {
		t.Fatalf("after clear then store: found %v, missing %v; want members read before the write forgotten", found, missing)
	}
	c.store(7, map[string][]string{"topic": {"a", "b"}}, false)
	found, _ = c.lookup(7, []string{"topic"}, false)
	if !slices.Equal(found["topic"], []string{"a", "b"}) {
		t.Fatalf("found %v after a store with nothing between, want [a b]", found)
	}
	if found, _ := c.lookup(7, []string{"topic"}, true); len(found) != 0 {
		t.Fatalf("open-only lookup found %v remembered for the whole vault", found)
	}
}
