package config

import "testing"

// FuzzParse feeds the same bytes to both document parsers, config.yaml's and
// the overrides file's: neither may panic, and whatever they accept must
// validate and print without panicking.
func FuzzParse(f *testing.F) {
	f.Add(mustReadFile(f, "../config.yaml"))
	for _, seed := range []string{
		"",
		"retrieval:\n  final_top_k: 6\n",
		"vault:\n  password: x\n",
		"log: &l {level: debug}\nweb: *l\n",
		"corpus:\n  include: [a, [b]]\n",
		"retrieval:\n  final_top_k: 5\n  final_top_k: 6\n",
		"---\n---\n",
		"[",
		`{"retrieval":{"final_top_k":6,"graph_discount":0.5},"corpus":{"include":["a\/**"]}}`,
		`{"index":{"reconcile_interval":"90m"},"models":{"rerank":null}}`,
		`{"a":`,
		`{"log":{"level":"debug","level":"warn"}} []`,
		`[[[[{}]]]]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if c, err := Parse(data, "fuzz.yaml"); err == nil {
			_ = c.Validate()
			_ = c.String()
		}
		if c, err := Default().WithOverrides(data, "fuzz.json"); err == nil {
			_ = c.Validate()
			_ = c.String()
		}
	})
}
