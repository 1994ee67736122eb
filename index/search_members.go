package index

import (
	"strconv"
	"sync"

	"github.com/vaultask/vaultask/index/markdown"
)

// topicMembersSQL reads the notes each topic note of ?1 (a JSON list of
// doc_ids) clips, under scope ?2 (1: open only), each once: the sibling
// hop's ends. A member is the note the index resolved, when scope may see
// it, or under ScopeOpen the link resolved again among open notes; a link
// that resolves to no note is none. Whether scope may see the topic note
// itself is the walk's to check (hopsSQL's visible_topics).
var topicMembersSQL = `SELECT DISTINCT src, dst FROM (
		SELECT e.src, CASE WHEN ?2 = 0 OR t.sensitivity = 'open' THEN e.dst ELSE ` + resolveSQL("e.target", "e.target_name", "1") + ` END AS dst
		FROM json_each(?1) j CROSS JOIN edges e ON e.src = j.value AND e.kind = '` + markdown.KindTopic + `' JOIN docs t ON t.doc_id = e.dst)
	WHERE dst IS NOT NULL`

// memberCache remembers topic notes' members (topicMembersSQL) for one
// graph version: a big topic note's members are most of a walk's rows (a
// topic of 1,200 notes is 1,200 rows for every question that reaches it),
// and questions reach the same few topic notes again and again while the
// graph stays as it is. This process's writes empty it once they commit
// (Store.hooks); another's, and a read in another snapshot, find nothing
// under a graph version they do not read.
type memberCache struct {
	mu      sync.Mutex
	version int64
	members map[memberKey][]string
	held    int // member ids held, at most maxCachedMembers
}

type memberKey struct {
	topic    string
	openOnly bool
}

// maxCachedMembers bounds the member ids remembered for one graph
// version, a few MB at most; past it the cache starts over.
const maxCachedMembers = 200_000

// graphVersion parses a graph version as read from meta: 0 when there is
// none yet.
func graphVersion(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// clear forgets every member remembered: a write of this process may have
// changed the graph (see Store.hooks).
func (c *memberCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.members, c.held = nil, 0
}

// lookup returns the members remembered for each of topics at version,
// and the topics it has none for. A version behind the cache's finds
// nothing; a version ahead of it empties it.
func (c *memberCache) lookup(version int64, topics []string, openOnly bool) (found map[string][]string, missing []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if version > c.version || c.members == nil {
		c.version, c.members, c.held = version, map[memberKey][]string{}, 0
	}
	found = map[string][]string{}
	for _, t := range topics {
		if m, ok := c.members[memberKey{t, openOnly}]; ok && version == c.version {
			found[t] = m
			continue
		}
		missing = append(missing, t)
	}
	return found, missing
}

// store remembers members read at version, unless the cache has moved on
// or was cleared since the read looked it up (a write committed meanwhile:
// what the read saw may be gone). A full cache starts over.
func (c *memberCache) store(version int64, members map[string][]string, openOnly bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if version != c.version || c.members == nil {
		return
	}
	for t, m := range members {
		if c.held+len(m) > maxCachedMembers {
			c.members, c.held = map[memberKey][]string{}, 0
		}
		c.members[memberKey{t, openOnly}] = m
		c.held += len(m)
	}
}
