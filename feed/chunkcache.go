package feed

import "container/list"

// chunkCache is where notes find their chunks: decoded chunk data by id. A
// follower's is bounded, the least recently used evicted beyond maxBytes
// (chunks are content-addressed and shared between notes, so an evicted one
// is simply fetched again by key); a reconcile's holds every chunk of its
// scan (maxBytes 0). It is used by one goroutine only.
type chunkCache struct {
	maxBytes int
	bytes    int
	order    *list.List // front: most recently used *cacheEntry
	entries  map[string]*list.Element
}

type cacheEntry struct {
	id, data string
}

func newChunkCache(maxBytes int) *chunkCache {
	return &chunkCache{maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

// Chunks returns the cached chunks among ids.
func (c *chunkCache) Chunks(ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if e, ok := c.entries[id]; ok {
			c.order.MoveToFront(e)
			out[id] = e.Value.(*cacheEntry).data
		}
	}
	return out, nil
}

func (c *chunkCache) put(id, data string) {
	if e, ok := c.entries[id]; ok {
		c.bytes += len(data) - len(e.Value.(*cacheEntry).data)
		e.Value.(*cacheEntry).data = data
		c.order.MoveToFront(e)
	} else {
		c.entries[id] = c.order.PushFront(&cacheEntry{id: id, data: data})
		c.bytes += len(id) + len(data)
	}
	for c.maxBytes > 0 && c.bytes > c.maxBytes && c.order.Len() > 1 {
		c.remove(c.order.Back())
	}
}

// evict drops a chunk, as a chunk tombstone asks.
func (c *chunkCache) evict(id string) {
	if e, ok := c.entries[id]; ok {
		c.remove(e)
	}
}

func (c *chunkCache) remove(e *list.Element) {
	ent := c.order.Remove(e).(*cacheEntry)
	delete(c.entries, ent.id)
	c.bytes -= len(ent.id) + len(ent.data)
}

func (c *chunkCache) len() int { return c.order.Len() }
